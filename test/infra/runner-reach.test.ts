import { describe, expect, it } from 'vitest';
import { RUNNER_TIMEOUTS } from '../../infra/flowmend-stack.ts';
import type { FlowmendStackProps } from '../../infra/props.ts';
import type { CfnTemplate } from '../support/cfn-asl.ts';
import { synthFlowmend } from '../support/synth-flowmend.ts';
import { actionsOf, asCfn, logicalId, managedPoliciesOf, statementsOf } from './stack-helpers.ts';

/*
 * Issue 27, item 3 on AWS: the runner Lambdas run workflow code (a shell command, a request, a transform,
 * a tool call). What their environment and their role hold is all such code could ever reach, so both
 * are listed here whole: a new variable or grant on a runner fails this test until it is argued for.
 */

const RUNNER_TYPES = Object.keys(RUNNER_TIMEOUTS);
const runnerPrefix = (type: string) => `Run${type[0]?.toUpperCase()}${type.slice(1)}`;

/** Every variable a runner's template may set: names only, never a value that grants anything. */
const ALLOWED_ENVIRONMENT: Readonly<Record<string, readonly string[]>> = {
  // The llm runner reads the Anthropic key by this name, at use; the key itself is in Secrets Manager.
  llm: ['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED', 'FLOWMEND_ANTHROPIC_SECRET_ID'],
};
const allowedEnvironment = (type: string) => ALLOWED_ENVIRONMENT[type] ?? ['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'];

/** Every action a runner's role may take (llm: and read the Anthropic key). */
const RUNNER_ACTIONS = [
  'logs:CreateLogStream',
  'logs:PutLogEvents',
  'secretsmanager:GetSecretValue',
  'ssm:GetParameter',
  'xray:PutTelemetryRecords',
  'xray:PutTraceSegments',
];

/** Settings that add variables or grants to other functions: none of them may reach a runner. */
const VARIANTS: readonly [string, FlowmendStackProps][] = [
  ['the defaults', {}],
  [
    'an OTLP endpoint, a named key and another secret prefix',
    { otlpEndpoint: 'http://collector:4318', anthropicSecretName: 'team/key', secretInputPrefix: 'wf/' },
  ],
  ['no secret inputs', { secretInputPrefix: '' }],
];

const runnerOf = (cfn: CfnTemplate, type: string): string => logicalId(cfn, 'AWS::Lambda::Function', runnerPrefix(type));

describe.each(VARIANTS)('runner Lambdas with %s', (_what, props) => {
  const cfn = asCfn(synthFlowmend(props).template);

  it.each(RUNNER_TYPES)('the %s runner is given no table, bucket, machine or credential in its environment', (type) => {
    const variables = (cfn.Resources[runnerOf(cfn, type)]?.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
    for (const name of Object.keys(variables)) expect(allowedEnvironment(type), `${type}: ${name}`).toContain(name);
    const values = JSON.stringify(variables);
    for (const engineOnly of ['TABLE_NAME', 'BUCKET_NAME', 'STATE_MACHINE', 'SECRET_ACCESS_KEY', 'API_KEY', 'TOKEN']) expect(values).not.toContain(engineOnly);
  });

  it.each(RUNNER_TYPES)('the %s runner role takes only its own logs, X-Ray and the secret inputs it is granted', (type) => {
    const id = runnerOf(cfn, type);
    const statements = statementsOf(cfn, id);
    const allowed = type === 'llm' ? [...RUNNER_ACTIONS, 'secretsmanager:DescribeSecret'] : RUNNER_ACTIONS;
    const actions = [...new Set(actionsOf(statements))];
    for (const action of actions) expect(allowed, `${type}: ${action}`).toContain(action);
    expect(managedPoliciesOf(cfn, id)).toEqual([]);
    // Only X-Ray (which has no resource-level permissions) is granted on '*'.
    for (const s of statements.filter((s) => s.Resource === '*')) expect(actionsOf([s]).every((a) => a.startsWith('xray:'))).toBe(true);
    const secretResources = JSON.stringify(statements.filter((s) => actionsOf([s]).some((a) => /^(secretsmanager|ssm):/.test(a))).map((s) => s.Resource));
    if (props.secretInputPrefix === '') expect(secretResources).not.toContain('inputs');
    if (type !== 'llm') expect(secretResources).not.toContain(props.anthropicSecretName ?? 'flowmend/anthropic-api-key');
  });
});
