import { RemovalPolicy, type StackProps } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Node } from 'constructs';
import { DEFAULT_EXECUTION_LIMITS } from '../functions/core/index.ts';
import * as z from '../functions/core/zod.ts';

export const LogLevelSchema = z.enum(['ALL', 'ERROR', 'FATAL', 'OFF']);

/** Everything a deployment may change, from typed props or from CDK context (`-c flowmend:<key>=...`). */
export const FlowmendSettingsSchema = z
  .object({
    /** What happens to the table and the blob bucket when the stack is deleted. */
    removalPolicy: z._default(z.enum(['retain', 'destroy']), 'retain'),
    /** Secrets Manager secret holding the Anthropic API key (a plain string), read by the llm runner and repair. */
    anthropicSecretName: z._default(z.string().check(z.minLength(1)), 'flowmend/anthropic-api-key'),
    /**
     * Step Functions execution log level; ERROR keeps Express runs cheap (the run's own events live in the
     * table). OFF is refused: the Express watcher reads the ERROR records of executions that died, and a
     * run whose execution died unseen would stay `running`.
     */
    logLevel: z._default(
      LogLevelSchema.check(
        z.refine((level) => level !== 'OFF', 'OFF would blind the watcher of Express executions (it reads their ERROR log records): use ERROR, FATAL or ALL'),
      ),
      'ERROR',
    ),
    /** Days a run's items (table TTL) and its large outputs (bucket lifecycle) are kept. */
    retentionDays: z._default(z.coerce.number().check(z.int(), z.positive()), 90),
    /** Days Lambda and state machine logs are kept. */
    logRetentionDays: z._default(
      z.coerce.number().check(
        z.int(),
        z.refine((days) => Object.values(RetentionDays).includes(days), 'not a retention CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, ...)'),
      ),
      30,
    ),
    /** Memory of every Lambda, MB (also drives the cost model). */
    lambdaMemoryMb: z._default(z.coerce.number().check(z.int(), z.gte(128), z.lte(10240)), 512),
    /**
     * Concurrent executions reserved for each runner Lambda, which also caps it (15-minute shell runners
     * cannot take the whole account's concurrency from the engine). 0, the default, reserves none: a new
     * account's concurrency quota is 10, and AWS refuses reservations that leave under 100 unreserved, so
     * any reservation fails `cdk deploy` there. Set it on accounts whose quota leaves room (5 runners x N).
     */
    runnerConcurrency: z._default(z.coerce.number().check(z.int(), z.gte(0), z.lte(1000)), 0),
    /** How callers of the REST API authenticate: SigV4-signed IAM principals (default), or an API key with a usage plan. */
    apiAuth: z._default(z.enum(['iam', 'apiKey']), 'iam'),
    /** EventBridge Scheduler (default), or EventBridge rules (cron/rate in UTC only) where Scheduler does not fire, as on LocalStack. */
    scheduleMode: z._default(z.enum(['scheduler', 'rules']), 'scheduler'),
    /**
     * How a waiting run wakes at its deadline (a wait node, an event's timeout): a one-time EventBridge
     * Scheduler schedule per wait (`scheduler`), or none (`none`: a due wait goes on when resumed). Unset, it
     * follows scheduleMode: `none` in `rules` mode, which exists for LocalStack, where Scheduler fires nothing.
     */
    waitWakeups: z.optional(z.enum(['scheduler', 'none'])),
    /**
     * Where secret inputs (`"from": "secretsmanager:NAME"` or `"ssm:NAME"`) may be read from: the runner
     * Lambdas may read Secrets Manager secrets and SSM parameters whose names start with it, and no others.
     * Empty: they may read none.
     */
    secretInputPrefix: z._default(
      z.string().check(z.regex(/^([A-Za-z0-9_+=.@-]+\/)*$/, 'a path prefix ending in / (e.g. flowmend/inputs/), or empty')),
      'flowmend/inputs/',
    ),
    /** SNS topic that the failed-execution alarms notify, if any. */
    alarmTopicArn: z.optional(z.string().check(z.startsWith('arn:'))),
    /** Lowest level of the functions' own log lines (JSON; Lambda drops the lines below it). */
    functionLogLevel: z._default(z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR']), 'INFO'),
    /** CloudWatch namespace of the run metrics (EMF), which the stack's dashboard reads. */
    metricsNamespace: z._default(
      z.string().check(z.regex(/^[A-Za-z0-9._/#:-]{1,255}$/, 'a CloudWatch namespace: letters, digits and . _ / # : -')),
      'flowmend',
    ),
    /**
     * An OTLP/HTTP endpoint (a collector: the ADOT collector, Grafana Alloy, ...) the engine, repair and API
     * functions send spans and metrics to, as OTEL_EXPORTER_OTLP_ENDPOINT. None by default: no SDK loads.
     */
    otlpEndpoint: z.optional(z.url({ protocol: /^https?$/ })),
    /**
     * Engine steps after which a run continues as a new execution; the default is what a Standard
     * execution's 25,000 history events allow with every retry used. Set it lower to see continue-as-new
     * in a short run (the emulator stack does), never higher.
     */
    maxAdvancesPerExecution: z.optional(z.coerce.number().check(z.int(), z.positive(), z.lte(DEFAULT_EXECUTION_LIMITS.maxAdvances))),
  })
  .check(
    z.refine((s) => s.secretInputPrefix === '' || !s.anthropicSecretName.startsWith(s.secretInputPrefix), {
      message: 'the Anthropic key must not be under secretInputPrefix: every runner (shell included) may read what is there',
      path: ['secretInputPrefix'],
    }),
  );
export type FlowmendSettings = z.infer<typeof FlowmendSettingsSchema>;
export type FlowmendSettingsInput = z.input<typeof FlowmendSettingsSchema>;

export interface FlowmendStackProps extends StackProps, FlowmendSettingsInput {}

export const CONTEXT_PREFIX = 'flowmend:';

/** Reads `flowmend:<key>` context values (cdk.json or `-c`); explicit props win over context. */
export const resolveSettings = (node: Node, props: FlowmendSettingsInput): FlowmendSettings => {
  const fromContext = Object.fromEntries(
    Object.keys(FlowmendSettingsSchema.shape)
      .map((key) => [key, node.tryGetContext(`${CONTEXT_PREFIX}${key}`)] as const)
      .filter(([, value]) => value !== undefined),
  );
  const defined = Object.fromEntries(Object.entries(props).filter(([, value]) => value !== undefined));
  const parsed = FlowmendSettingsSchema.safeParse({ ...fromContext, ...defined });
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid flowmend stack settings: ${issues}`);
  }
  return parsed.data;
};

export const toRemovalPolicy = (policy: FlowmendSettings['removalPolicy']): RemovalPolicy => {
  switch (policy) {
    case 'retain':
      return RemovalPolicy.RETAIN;
    case 'destroy':
      return RemovalPolicy.DESTROY;
  }
};
