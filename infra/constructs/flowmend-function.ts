import { fileURLToPath } from 'node:url';
import { type Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { OTEL_FILE } from '../../functions/hosts/lambda/bundled-otel.ts';
import { SECRET_RESOLVER_FILE } from '../../functions/hosts/lambda/bundled-secret-resolver.ts';
import {
  ESM_REQUIRE_SHIM,
  LAMBDA_ALIASES,
  LAMBDA_MINIFY,
  LAMBDA_NODE_TARGET,
  LAMBDA_SOURCE_MAP,
  OTEL_ENTRY,
  SECRET_RESOLVER_ENTRY,
  shellWord,
} from '../bundle-options.ts';
import { acknowledgeNag, XRAY_REASON } from '../nag.ts';
import { prebuiltCode, prebuiltLambdaDir } from '../prebuilt-code.ts';

/** Path of a Lambda entry point under functions/hosts/lambda. */
export const handlerEntry = (name: string): string => fileURLToPath(new URL(`../../functions/hosts/lambda/${name}.ts`, import.meta.url));

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface FlowmendFunctionProps {
  /** File name under functions/hosts/lambda, without `.ts`. */
  handler: string;
  description: string;
  timeout: Duration;
  memoryMb: number;
  logRetentionDays: number;
  environment?: Record<string, string>;
  /** Concurrent executions reserved for (and capped at) this function; undefined shares the account pool. */
  reservedConcurrency?: number;
  /** Lowest level of its log lines, which are JSON (Lambda's JSON log format; Powertools Logger reads the level). */
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /** Where failed asynchronous invocations go; only for functions invoked asynchronously (EventBridge, log subscriptions). */
  deadLetterQueue?: sqs.IQueue;
  /**
   * Bundles the Secrets Manager / SSM resolver as a second file beside the handler's (runners: loaded only
   * when a node has a secret input, so the handler's own bundle stays free of both clients).
   */
  secretResolverFile?: boolean;
  /** Bundles the OpenTelemetry SDK as a second file beside the handler's (loaded only when an OTLP endpoint is set). */
  otelFile?: boolean;
  /** More files bundled beside the handler's, each from its entry (the Advance Lambda's wait services: bundled-wait-services.ts). */
  sideBundles?: readonly { entry: string; file: string }[];
}

/** The afterBundling command that writes a side file's bundle beside `index.mjs` (infra/side-bundle.ts, run from the project root). */
const sideBundleCommand = (inputDir: string, outputDir: string, entry: string, file: string): string =>
  ['node', '--import', 'tsx', `${inputDir}/infra/side-bundle.ts`, `${inputDir}/${entry}`, `${outputDir}/${file}`].map(shellWord).join(' ');

/** The Lambda runtime of every function (aws-cdk-lib 2.276 has Node 24). */
export const LAMBDA_RUNTIME = lambda.Runtime.NODEJS_24_X;

/**
 * A Lambda with its own role and log group: Node 24 on arm64, an ESM bundle built by the local esbuild,
 * X-Ray on. The role may write only its own log group (not the managed basic-execution policy, which
 * grants logs on every group in the account); each caller adds what the handler uses.
 */
export class FlowmendFunction extends Construct {
  readonly fn: lambda.Function;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: FlowmendFunctionProps) {
    super(scope, id);
    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetentionDays as logs.RetentionDays,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.logGroup = logGroup;
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `${props.description}: writes its own log group only`,
    });
    logGroup.grantWrite(this.role);
    const sideFiles: [string, string][] = [
      ...(props.secretResolverFile ? [[SECRET_RESOLVER_ENTRY, SECRET_RESOLVER_FILE] as [string, string]] : []),
      ...(props.otelFile ? [[OTEL_ENTRY, OTEL_FILE] as [string, string]] : []),
      ...(props.sideBundles ?? []).map((b) => [b.entry, b.file] as [string, string]),
    ];
    const level = props.logLevel ?? 'INFO';
    const writesMetrics = props.environment?.POWERTOOLS_METRICS_NAMESPACE !== undefined;
    const options = {
      description: props.description,
      runtime: LAMBDA_RUNTIME,
      role: this.role,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memoryMb,
      timeout: props.timeout,
      tracing: lambda.Tracing.ACTIVE,
      logGroup,
      // Every line JSON, the runtime's own too; below the level nothing is written (nor paid for). A
      // function that writes EMF metrics keeps Lambda's level at INFO or below: an EMF line has no level,
      // which Lambda takes for INFO, so WARN would drop every metric; its lines' own level is FLOWMEND_LOG_LEVEL.
      loggingFormat: lambda.LoggingFormat.JSON,
      applicationLogLevelV2: lambda.ApplicationLogLevel[writesMetrics && level !== 'DEBUG' ? 'INFO' : level],
      systemLogLevelV2:
        lambda.SystemLogLevel[props.logLevel === 'DEBUG' ? 'DEBUG' : props.logLevel === 'INFO' || props.logLevel === undefined ? 'INFO' : 'WARN'],
      ...(props.reservedConcurrency === undefined ? {} : { reservedConcurrentExecutions: props.reservedConcurrency }),
      ...(props.deadLetterQueue === undefined ? {} : { deadLetterQueue: props.deadLetterQueue }),
      environment: {
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        ...(writesMetrics ? { FLOWMEND_LOG_LEVEL: level } : {}),
        ...props.environment,
      },
    };
    // Installed from npm, the construct has no sources to bundle: it deploys the bundles the package was built with.
    const prebuilt = prebuiltLambdaDir();
    this.fn =
      prebuilt !== undefined
        ? new lambda.Function(this, 'Function', {
            ...options,
            handler: 'index.handler',
            code: prebuiltCode(
              prebuilt,
              props.handler,
              sideFiles.map(([, file]) => file),
            ),
          })
        : new NodejsFunction(this, 'Function', {
            ...options,
            entry: handlerEntry(props.handler),
            handler: 'handler',
            projectRoot: PROJECT_ROOT,
            depsLockFilePath: `${PROJECT_ROOT}package-lock.json`,
            bundling: {
              format: OutputFormat.ESM,
              target: LAMBDA_NODE_TARGET,
              platform: 'node',
              mainFields: ['module', 'main'],
              // NodejsFunction's `minify` is all or nothing; LAMBDA_MINIFY keeps identifiers (bundle-options.ts says why).
              minify: false,
              sourceMap: LAMBDA_SOURCE_MAP,
              banner: ESM_REQUIRE_SHIM,
              esbuildArgs: {
                '--alias': Object.entries(LAMBDA_ALIASES).map(([from, to]) => `${from}=${to}`),
                '--minify-whitespace': LAMBDA_MINIFY.minifyWhitespace,
                '--minify-syntax': LAMBDA_MINIFY.minifySyntax,
                '--minify-identifiers': LAMBDA_MINIFY.minifyIdentifiers,
              },
              logLevel: LogLevel.ERROR,
              // Bundle our pinned SDK versions instead of whatever the runtime ships.
              externalModules: [],
              ...(sideFiles.length > 0
                ? {
                    commandHooks: {
                      beforeBundling: () => [],
                      beforeInstall: () => [],
                      afterBundling: (inputDir: string, outputDir: string) =>
                        sideFiles.map(([entry, file]) => sideBundleCommand(inputDir, outputDir, entry, file)),
                    },
                  }
                : {}),
            },
          });
    acknowledgeNag(this.role, 'AwsSolutions', 'AwsSolutions-IAM5[Resource::*]', XRAY_REASON);
    if (props.deadLetterQueue === undefined) {
      acknowledgeNag(
        this.fn,
        'Serverless',
        'Serverless-LambdaDLQ',
        'invoked synchronously only (by Step Functions or a caller waiting for the answer): failures go back to the caller, a DLQ applies to asynchronous invocations',
      );
    }
  }
}
