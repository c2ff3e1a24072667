import {
  GetPolicyCommand,
  GetPolicyVersionCommand,
  GetRolePolicyCommand,
  type IAMClient,
  ListAttachedRolePoliciesCommand,
  ListRolePoliciesCommand,
} from '@aws-sdk/client-iam';
import { DescribeSecretCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { EMULATOR_ACCOUNT, EMULATOR_REGION } from '../../../scripts/emulator/emulator.ts';

/**
 * Every AWS call a Lambda of the stack made on the emulator (recorded by the emulator, signed with the
 * function's own key), turned into the IAM request AWS would authorize: action, resources and context.
 * Each is then evaluated against the policies of the function's role as deployed from the template, with
 * a real IAM policy evaluator (@cloud-copilot/iam-simulate): a call the role does not grant is a failure.
 */

export interface RecordedCall {
  caller: { functionName: string; role: string; functionArn: string };
  method: string;
  host: string;
  path: string;
  query: string;
  target: string | null;
  body: string;
}

export interface IamRequest {
  action: string;
  resource: string;
  context?: Record<string, string | string[]>;
}

export interface CallVerdict {
  function: string;
  call: string;
  request: IamRequest;
  result: string;
}

const arn = (service: string, resource: string, region = EMULATOR_REGION) => `arn:aws:${service}:${region}:${EMULATOR_ACCOUNT}:${resource}`;
const json = (body: string): Record<string, unknown> => (body ? (JSON.parse(body) as Record<string, unknown>) : {});
const str = (value: unknown): string => (typeof value === 'string' ? value : '');

type SecretArns = (nameOrArn: string) => Promise<string>;

/** The IAM requests behind one recorded call; throws on a call of a kind this does not know (so a new one is noticed). */
export async function iamRequestsOf(call: RecordedCall, secretArn: SecretArns): Promise<IamRequest[]> {
  const target = call.target ?? '';
  const body = () => json(call.body);
  if (target.startsWith('DynamoDB_20120810.')) {
    const op = target.slice('DynamoDB_20120810.'.length);
    const b = body();
    const table = (name: string) => arn('dynamodb', `table/${name}`);
    if (op === 'BatchGetItem' || op === 'BatchWriteItem') {
      return Object.keys((b.RequestItems as Record<string, unknown>) ?? {}).map((name) => ({ action: `dynamodb:${op}`, resource: table(name) }));
    }
    if (op === 'TransactWriteItems') {
      const kinds: Record<string, string> = { Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', ConditionCheck: 'ConditionCheckItem' };
      return ((b.TransactItems as Record<string, { TableName: string }>[]) ?? []).flatMap((item) =>
        Object.entries(item).map(([kind, spec]) => ({ action: `dynamodb:${kinds[kind] ?? kind}`, resource: table(spec.TableName) })),
      );
    }
    const index = str(b.IndexName);
    return [{ action: `dynamodb:${op}`, resource: index ? `${table(str(b.TableName))}/index/${index}` : table(str(b.TableName)) }];
  }
  if (target.startsWith('AWSStepFunctions.')) {
    const op = target.slice('AWSStepFunctions.'.length);
    const b = body();
    return [{ action: `states:${op}`, resource: str(b.executionArn) || str(b.stateMachineArn) }];
  }
  if (target.startsWith('AWSEvents.')) {
    const op = target.slice('AWSEvents.'.length);
    const b = body();
    if (op === 'PutEvents') return [{ action: 'events:PutEvents', resource: arn('events', 'event-bus/default') }];
    return [{ action: `events:${op}`, resource: arn('events', `rule/${str(b.Name) || str(b.Rule)}`) }];
  }
  if (target.startsWith('secretsmanager.')) {
    const op = target.slice('secretsmanager.'.length);
    return [{ action: `secretsmanager:${op}`, resource: await secretArn(str(body().SecretId)) }];
  }
  if (target.startsWith('AmazonSSM.')) {
    const op = target.slice('AmazonSSM.'.length);
    return [{ action: `ssm:${op}`, resource: arn('ssm', `parameter/${str(body().Name).replace(/^\//, '')}`) }];
  }
  if (call.path.startsWith('/schedules')) {
    const name = decodeURIComponent(call.path.slice('/schedules/'.length));
    const query = new URLSearchParams(call.query);
    const b = call.method === 'POST' || call.method === 'PUT' ? body() : {};
    const group = str(b.GroupName) || query.get('groupName') || 'default';
    const ops: Record<string, string> = { POST: 'CreateSchedule', PUT: 'UpdateSchedule', GET: 'GetSchedule', DELETE: 'DeleteSchedule' };
    const requests: IamRequest[] = [{ action: `scheduler:${ops[call.method] ?? call.method}`, resource: arn('scheduler', `schedule/${group}/${name}`) }];
    const role = str((b.Target as Record<string, unknown> | undefined)?.RoleArn);
    // Scheduler assumes the role the schedule names: the caller must be allowed to pass it.
    if (role) requests.push({ action: 'iam:PassRole', resource: role, context: { 'iam:PassedToService': 'scheduler.amazonaws.com' } });
    return requests;
  }
  const s3 = s3Request(call);
  if (s3 !== undefined) return [s3];
  throw new Error(`a call this check does not know: ${call.method} ${call.host}${call.path}?${call.query} (${target || 'no target'})`);
}

/** Path-style (`/bucket/key`) or virtual-host (`bucket.localhost`) S3 requests. */
function s3Request(call: RecordedCall): IamRequest | undefined {
  const hostBucket = /^([a-z0-9.-]+)\.localhost(:\d+)?$/.exec(call.host)?.[1];
  const [first = '', ...rest] = call.path.replace(/^\//, '').split('/');
  const bucket = hostBucket ?? first;
  const key = decodeURIComponent((hostBucket ? [first, ...rest] : rest).join('/'));
  if (!bucket) return undefined;
  const query = new URLSearchParams(call.query);
  if (key === '' && call.method === 'GET') return { action: 's3:ListBucket', resource: `arn:aws:s3:::${bucket}` };
  const ops: Record<string, string> = { GET: 's3:GetObject', HEAD: 's3:GetObject', PUT: 's3:PutObject', DELETE: 's3:DeleteObject' };
  if (call.method === 'POST' && query.has('delete')) return { action: 's3:DeleteObject', resource: `arn:aws:s3:::${bucket}/*` };
  const action = ops[call.method];
  return action === undefined ? undefined : { action, resource: `arn:aws:s3:::${bucket}/${key}` };
}

/** The identity policies of a role as deployed (inline and attached), by role ARN, read once. */
export function rolePolicies(iam: IAMClient): (roleArn: string) => Promise<{ name: string; policy: unknown }[]> {
  const cache = new Map<string, Promise<{ name: string; policy: unknown }[]>>();
  const read = async (roleArn: string) => {
    const roleName = roleArn.split('/').at(-1) ?? '';
    const policies: { name: string; policy: unknown }[] = [];
    for (const name of (await iam.send(new ListRolePoliciesCommand({ RoleName: roleName }))).PolicyNames ?? []) {
      const document = (await iam.send(new GetRolePolicyCommand({ RoleName: roleName, PolicyName: name }))).PolicyDocument ?? '{}';
      policies.push({ name, policy: JSON.parse(decodeURIComponent(document)) });
    }
    for (const attached of (await iam.send(new ListAttachedRolePoliciesCommand({ RoleName: roleName }))).AttachedPolicies ?? []) {
      const policy = (await iam.send(new GetPolicyCommand({ PolicyArn: attached.PolicyArn }))).Policy;
      const version = await iam.send(new GetPolicyVersionCommand({ PolicyArn: attached.PolicyArn, VersionId: policy?.DefaultVersionId }));
      policies.push({ name: attached.PolicyName ?? '', policy: JSON.parse(decodeURIComponent(version.PolicyVersion?.Document ?? '{}')) });
    }
    return policies;
  };
  return (roleArn) => {
    let pending = cache.get(roleArn);
    if (pending === undefined) {
      pending = read(roleArn);
      cache.set(roleArn, pending);
    }
    return pending;
  };
}

/** A secret's ARN as IAM sees it: the full ARN when it exists, else the name's ARN without the random suffix. */
export const secretArns =
  (secrets: SecretsManagerClient): SecretArns =>
  async (nameOrArn) => {
    if (nameOrArn.startsWith('arn:')) return nameOrArn;
    try {
      return (await secrets.send(new DescribeSecretCommand({ SecretId: nameOrArn }))).ARN ?? arn('secretsmanager', `secret:${nameOrArn}`);
    } catch {
      return arn('secretsmanager', `secret:${nameOrArn}`);
    }
  };

/** Evaluates every call; returns one verdict per IAM request, `Allowed` or why not. */
export async function checkCalls(
  lines: string[],
  deps: { iam: IAMClient; secrets: SecretsManagerClient; ownFunction: (name: string) => boolean },
): Promise<CallVerdict[]> {
  const policiesOf = rolePolicies(deps.iam);
  const secretArn = secretArns(deps.secrets);
  const verdicts: CallVerdict[] = [];
  for (const line of lines) {
    const call = JSON.parse(line) as RecordedCall;
    if (!deps.ownFunction(call.caller.functionName)) continue;
    const describe = `${call.method} ${call.host}${call.path}${call.target ? ` ${call.target}` : ''}`;
    for (const request of await iamRequestsOf(call, secretArn)) {
      const result = await runSimulation(
        {
          request: {
            principal: call.caller.role,
            action: request.action,
            resource: { resource: request.resource, accountId: EMULATOR_ACCOUNT },
            contextVariables: request.context ?? {},
          },
          identityPolicies: await policiesOf(call.caller.role),
          serviceControlPolicies: [],
          resourceControlPolicies: [],
        },
        { simulationMode: 'Strict' },
      );
      const outcome = result.resultType === 'error' ? `error: ${result.errors.message}` : result.overallResult;
      verdicts.push({ function: call.caller.functionName, call: describe, request, result: outcome });
    }
  }
  return verdicts;
}
