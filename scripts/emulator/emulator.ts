import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensureLambdaNode } from './lambda-node.ts';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const SERVER = join(ROOT, 'scripts', 'emulator', 'server.py');

/** The account and region moto answers for, and the credentials callers sign with (any are accepted). */
export const EMULATOR_ACCOUNT = '123456789012';
export const EMULATOR_REGION = 'us-east-1';
export const EMULATOR_CREDENTIALS = { accessKeyId: 'emulator', secretAccessKey: 'emulator-secret' } as const;

export interface Emulator {
  /** `http://localhost:PORT`: `localhost`, not 127.0.0.1 (moto's CloudFormation reads the host of template URLs). */
  endpoint: string;
  port: number;
  /** Where each call a Lambda made is written, one JSON object a line. */
  callsFile: string;
  pid: number;
  stop(): Promise<void>;
}

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });

/** The environment the AWS CLI tools and SDKs need to talk to the emulator instead of AWS. */
export const emulatorEnv = (endpoint: string): NodeJS.ProcessEnv => ({
  AWS_ENDPOINT_URL: endpoint,
  AWS_REGION: EMULATOR_REGION,
  AWS_DEFAULT_REGION: EMULATOR_REGION,
  AWS_ACCESS_KEY_ID: EMULATOR_CREDENTIALS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: EMULATOR_CREDENTIALS.secretAccessKey,
  CDK_DISABLE_CLI_TELEMETRY: 'true',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
});

async function waitForHealth(endpoint: string, child: ChildProcess, logFile: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`the emulator exited with ${child.exitCode}: ${readFileSync(logFile, 'utf8').slice(-2000)}`);
    }
    try {
      const answer = await fetch(`${endpoint}/_emulator/health`);
      if (answer.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the emulator did not answer on ${endpoint} within ${timeoutMs} ms: ${readFileSync(logFile, 'utf8').slice(-2000)}`);
}

/**
 * Starts moto (scripts/emulator/server.py) on `port` (a free one if 0) with its state in `stateDir`.
 * `detached` leaves it running after this process (npm run deploy:emulator); tests stop it.
 */
export async function startEmulator(options: { stateDir: string; port?: number; detached?: boolean }): Promise<Emulator> {
  mkdirSync(options.stateDir, { recursive: true });
  const node = ensureLambdaNode();
  const port = options.port || (await freePort());
  const endpoint = `http://localhost:${port}`;
  const callsFile = join(options.stateDir, 'calls.jsonl');
  writeFileSync(callsFile, '');
  const logFile = join(options.stateDir, 'emulator.log');
  const log = openSync(logFile, 'w');
  const caller = `${EMULATOR_CREDENTIALS.accessKeyId}:${EMULATOR_CREDENTIALS.secretAccessKey}`;
  const child = spawn(
    'python3',
    [SERVER, '--port', String(port), '--state-dir', options.stateDir, '--node', node, '--calls', callsFile, '--caller', caller, '--region', EMULATOR_REGION],
    { stdio: ['ignore', log, log], detached: options.detached === true, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' } },
  );
  if (options.detached === true) child.unref();
  await waitForHealth(endpoint, child, logFile, 60_000);
  const pid = child.pid ?? 0;
  return {
    endpoint,
    port,
    callsFile,
    pid,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The AWS CDK CLI of this project, against the emulator. */
export const cdk = (args: string[], endpoint: string, timeoutMs = 10 * 60_000) =>
  run(join(ROOT, 'node_modules', '.bin', 'cdk'), [...args, '--no-notices'], {
    cwd: ROOT,
    env: { ...process.env, ...emulatorEnv(endpoint) },
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  });
