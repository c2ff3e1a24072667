import { mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudWatchLogsClient, DescribeLogGroupsCommand, FilterLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import { IAMClient } from '@aws-sdk/client-iam';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { CreateSecretCommand, DeleteSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SFNClient } from '@aws-sdk/client-sfn';
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll } from 'vitest';
import { ApiClient, makeSigV4Signer } from '../../../functions/hosts/cli/api-client.ts';
import { emulatorApiUrl } from '../../../scripts/emulator/deploy.ts';
import { EMULATOR_CREDENTIALS, EMULATOR_REGION } from '../../../scripts/emulator/emulator.ts';
import { deployedStack } from './emulator-state.ts';
import { checkCalls } from './iam-check.ts';

export interface RunReport {
  run_id: string;
  status: string;
  success?: boolean;
  result?: Record<string, unknown>;
  errors?: { node_id?: string; category: string; code?: string; message: string; fixable: boolean }[];
  repairs?: { attempt: number; outcome: string; reason?: string }[];
  steps?: { node_id: string; status: string; cached: boolean; repaired: boolean; interrupted?: boolean }[];
  metrics?: Record<string, unknown>;
}

const TERMINAL = ['succeeded', 'failed', 'cancelled', 'interrupted'];

/** One deployed stack and what a scenario reaches it with: the signed REST API, AWS clients, the emulator's controls. */
export interface DeployedStack {
  endpoint: string;
  outputs: Record<string, string>;
  api: ApiClient;
  apiUrl: string;
  sfn: SFNClient;
  lambda: LambdaClient;
  logs: CloudWatchLogsClient;
  s3: S3Client;
  iam: IAMClient;
  sqs: SQSClient;
  secrets: SecretsManagerClient;
  callsFile: string;
  /** Bytes of the calls file's complete lines now: `callsSince(mark)` reads what came after. */
  mark(): number;
  /** Starts a run through `POST /runs`; returns its id. */
  start(body: Record<string, unknown>): Promise<string>;
  /** `GET /runs/{id}` until the run's status is one of `statuses` (terminal ones by default). */
  waitFor(runId: string, statuses?: string[], timeoutMs?: number): Promise<RunReport>;
  /** Fires a scheduled EventBridge rule at `time`, as EventBridge would. */
  fireRule(name: string, time: string): Promise<{ fired: boolean }>;
  /** A secret in the emulator's Secrets Manager, deleted by the returned function. */
  putSecret(name: string, value: string): Promise<() => Promise<void>>;
  /** Lines a function logged (its log group), newest last. */
  functionLogs(functionNamePart: string): Promise<string[]>;
}

/**
 * A directory of the calling test file's own, which the deployed Lambdas share with it (moto runs them on this
 * machine): gates, counters and logs of side effects. Removed once the file's tests ran.
 */
export const scenarioDir = (name: string): string => {
  const dir = mkdtempSync(join(tmpdir(), `flowmend-emulator-${name}-`));
  afterAll(() => rm(dir, { recursive: true, force: true }));
  return dir;
};

export async function useDeployedStack(): Promise<DeployedStack> {
  const state = await deployedStack();
  const { endpoint, outputs } = state;
  const config = { endpoint, region: EMULATOR_REGION, credentials: EMULATOR_CREDENTIALS };
  const apiUrl = emulatorApiUrl(endpoint, outputs.RestApiId ?? '');
  const api = new ApiClient(apiUrl, undefined, await makeSigV4Signer(EMULATOR_REGION, EMULATOR_CREDENTIALS));
  const logs = new CloudWatchLogsClient(config);
  const secrets = new SecretsManagerClient(config);
  const stack: DeployedStack = {
    endpoint,
    outputs,
    api,
    apiUrl,
    sfn: new SFNClient(config),
    lambda: new LambdaClient(config),
    logs,
    s3: new S3Client({ ...config, forcePathStyle: true }),
    iam: new IAMClient(config),
    sqs: new SQSClient(config),
    secrets,
    callsFile: state.callsFile,
    mark: () => completeLines(readFileSync(state.callsFile)),
    start: async (body) => (await api.call<{ run_id: string }>('POST', '/runs', { body })).run_id,
    waitFor: async (runId, statuses = TERMINAL, timeoutMs = 120_000) => {
      const deadline = Date.now() + timeoutMs;
      let report = await api.call<RunReport>('GET', `/runs/${runId}`);
      while (!statuses.includes(report.status)) {
        if (Date.now() > deadline)
          throw new Error(`run ${runId} is ${report.status} after ${timeoutMs} ms, not ${statuses.join('|')}: ${JSON.stringify(report).slice(0, 2000)}`);
        await new Promise((resolve) => setTimeout(resolve, 300));
        report = await api.call<RunReport>('GET', `/runs/${runId}`);
      }
      return report;
    },
    fireRule: async (name, time) => {
      const answer = await fetch(`${endpoint}/_emulator/fire-rule`, { method: 'POST', body: JSON.stringify({ name, time }) });
      if (!answer.ok) throw new Error(`fire-rule ${name}: ${answer.status} ${await answer.text()}`);
      return (await answer.json()) as { fired: boolean };
    },
    putSecret: async (name, value) => {
      await secrets.send(new CreateSecretCommand({ Name: name, SecretString: value }));
      return async () => {
        await secrets.send(new DeleteSecretCommand({ SecretId: name, ForceDeleteWithoutRecovery: true }));
      };
    },
    functionLogs: async (part) => {
      const groups = (await logs.send(new DescribeLogGroupsCommand({}))).logGroups ?? [];
      const lines: { at: number; message: string }[] = [];
      for (const group of groups.filter((g) => g.logGroupName?.includes(part))) {
        const events = (await logs.send(new FilterLogEventsCommand({ logGroupName: group.logGroupName }))).events ?? [];
        lines.push(...events.map((e) => ({ at: e.timestamp ?? 0, message: e.message ?? '' })));
      }
      return lines.sort((a, b) => a.at - b.at).map((l) => l.message);
    },
  };
  return stack;
}

/**
 * Bytes up to the end of the last complete line. The emulator appends a call while other test files'
 * Lambdas run, and a reader can see a line half written: a mark inside it would start the next read
 * mid-record, so the mark stays at a line's start and the call being written belongs to what comes next.
 */
const completeLines = (bytes: Buffer): number => bytes.lastIndexOf(0x0a) + 1;

/**
 * The calls functions made since `mark` (bytes into the calls file). A line still being written is waited for
 * (up to 2 s); one still unfinished then (other files' Lambdas calling without a pause) is left to a later read.
 */
export async function callsSince(callsFile: string, mark: number): Promise<string[]> {
  let bytes = readFileSync(callsFile).subarray(mark);
  for (let tries = 0; completeLines(bytes) !== bytes.length && tries < 40; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    bytes = readFileSync(callsFile).subarray(mark);
  }
  return bytes
    .subarray(0, completeLines(bytes))
    .toString('utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
}

/**
 * Every AWS call the stack's Lambdas made since `mark`, evaluated against their roles' policies (see
 * iam-check.ts); returns what the roles do not allow, as lines to read in a failed expectation.
 */
export async function callsNotAllowed(stack: DeployedStack, mark: number): Promise<string[]> {
  const verdicts = await checkCalls(await callsSince(stack.callsFile, mark), {
    iam: stack.iam,
    secrets: stack.secrets,
    ownFunction: (name) => name.startsWith('FlowmendEmulator-'),
  });
  return verdicts.filter((v) => v.result !== 'Allowed').map((v) => `${v.function}: ${v.request.action} on ${v.request.resource} (${v.call}): ${v.result}`);
}

/** What a failed expectation on a run shows: its status and errors (the cause of an interrupted or failed run). */
export const explain = (report: RunReport): string => `run ${report.run_id} is ${report.status}: ${JSON.stringify(report.errors ?? []).slice(0, 1500)}`;
