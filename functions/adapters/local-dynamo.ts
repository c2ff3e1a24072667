import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { StoreUnavailableError } from '../core/errors.ts';
import { createLocalDynamoClient } from './dynalite-server.ts';
import { createDocumentClient, DynamoRunStore } from './dynamo-run-store.ts';
import { ensureTable } from './table-schema.ts';

export const DEFAULT_LOCAL_TABLE = 'flowmend';
const DAEMON_PATH = fileURLToPath(new URL('./dynalite-daemon.mjs', import.meta.url));
/** The daemon's exit code when another daemon holds the database (see dynalite-daemon.mjs). */
const LOST_LOCK = 75;
const START_TIMEOUT_MS = 10_000;

export interface DaemonInfo {
  pid: number;
  port: number;
  startedAt: string;
}

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

export const daemonInfoPath = (stateDir: string): string => join(resolve(stateDir), 'dynalite.json');
const daemonLogPath = (stateDir: string): string => join(resolve(stateDir), 'dynalite.log');

export function readDaemonInfo(stateDir: string): DaemonInfo | undefined {
  try {
    const info = JSON.parse(readFileSync(daemonInfoPath(stateDir), 'utf8')) as Partial<DaemonInfo>;
    return typeof info.pid === 'number' && typeof info.port === 'number' ? (info as DaemonInfo) : undefined;
  } catch {
    return undefined;
  }
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether a DynamoDB peer answers ListTables on the port (a recycled pid or port answers otherwise). */
function answersDynamo(port: number): Promise<boolean> {
  return new Promise((done) => {
    const req = request(
      {
        host: '127.0.0.1', port, method: 'POST', path: '/', timeout: 2000,
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          'x-amz-target': 'DynamoDB_20120810.ListTables',
          'x-amz-date': '20200101T000000Z',
          // dynalite insists on a signature's shape, not on its validity.
          authorization: 'AWS4-HMAC-SHA256 Credential=local/20200101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => done(res.statusCode === 200 && body.includes('TableNames')));
      },
    );
    req.on('error', () => done(false));
    req.on('timeout', () => req.destroy());
    req.end('{}');
  });
}

/** Starts a daemon; `exitCode` stays undefined while it runs (null when a signal ended it, -1 when it could not start). */
function spawnTrackedDaemon(stateDir: string): { exitCode: number | null | undefined } {
  const state: { exitCode: number | null | undefined } = { exitCode: undefined };
  const logFd = openSync(daemonLogPath(stateDir), 'a');
  try {
    const child = spawn(process.execPath, [DAEMON_PATH, resolve(stateDir)], { detached: true, stdio: ['ignore', logFd, logFd] });
    child.on('exit', (code) => (state.exitCode = code));
    child.on('error', () => (state.exitCode = -1));
    child.unref();
  } finally {
    closeSync(logFd);
  }
  return state;
}

const logTail = (stateDir: string): string => {
  try {
    return readFileSync(daemonLogPath(stateDir), 'utf8').trimEnd().split('\n').slice(-5).join('\n');
  } catch {
    return '(no log)';
  }
};

/**
 * The endpoint of the state dir's daemon, started if none answers. Start races are settled by LevelDB's
 * lock: a losing daemon exits with LOST_LOCK and every caller ends up on the winner's advertised port.
 */
export async function discoverDaemon(stateDir: string): Promise<string> {
  mkdirSync(join(resolve(stateDir), 'db'), { recursive: true });
  const deadline = Date.now() + START_TIMEOUT_MS;
  let child: { exitCode: number | null | undefined } | undefined;
  for (;;) {
    const info = readDaemonInfo(stateDir);
    if (info && isProcessAlive(info.pid) && (await answersDynamo(info.port))) return `http://127.0.0.1:${info.port}`;
    if (child === undefined || child.exitCode !== undefined) {
      const code = child?.exitCode;
      if (typeof code === 'number' && code !== LOST_LOCK && code !== 0) {
        throw new StoreUnavailableError(`the local DynamoDB daemon exited with code ${code}:\n${logTail(stateDir)}`);
      }
      child = spawnTrackedDaemon(stateDir);
    }
    if (Date.now() > deadline) {
      throw new StoreUnavailableError(`no local DynamoDB daemon answered within ${START_TIMEOUT_MS / 1000} s (${stateDir}):\n${logTail(stateDir)}`);
    }
    await pause(20);
  }
}

/** Stops the state dir's daemon (SIGTERM, then SIGKILL after 10 s) and waits until its process is gone. */
export async function stopLocalDaemon(stateDir: string): Promise<void> {
  const info = readDaemonInfo(stateDir);
  if (!info || !isProcessAlive(info.pid)) return;
  process.kill(info.pid, 'SIGTERM');
  const deadline = Date.now() + 10_000;
  while (isProcessAlive(info.pid)) {
    if (Date.now() > deadline) process.kill(info.pid, 'SIGKILL');
    await pause(20);
  }
}

const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE']);
const isConnectionError = (error: unknown): boolean => {
  const e = error as { code?: unknown; message?: unknown } | undefined;
  return CONNECTION_ERRORS.has(String(e?.code)) || String(e?.message).includes('socket hang up');
};

/**
 * A client on the daemon that re-discovers it (starting a new one if needed) and retries a call once when
 * the connection fails. Retrying is safe: plain writes are idempotent and DynamoRunStore recognises its own
 * conditional write by its write token when a retry finds the first attempt already applied.
 */
function createReconnectingClient(stateDir: string, first: string): { client: DynamoDBClient; endpoint: () => string } {
  let endpoint = first;
  let discovering: Promise<string> | undefined;
  const rediscover = async (failed: string): Promise<void> => {
    if (endpoint !== failed) return;
    discovering ??= discoverDaemon(stateDir).finally(() => (discovering = undefined));
    endpoint = await discovering;
  };
  const url = () => new URL(endpoint);
  const client = createLocalDynamoClient(
    async () => ({ protocol: 'http:', hostname: url().hostname, port: Number(url().port), path: '/' }),
    // The SDK's own retries would back off against a dead port; this client retries after discovery instead.
    { maxAttempts: 1 },
  );
  client.middlewareStack.add(
    (next) => async (args) => {
      const used = endpoint;
      try {
        return await next(args);
      } catch (error) {
        if (!isConnectionError(error)) throw error;
        await rediscover(used);
        return next(args);
      }
    },
    { step: 'initialize', name: 'flowmendReconnectLocalDaemon', priority: 'high' },
  );
  return { client, endpoint: () => endpoint };
}

export interface LocalStore {
  store: DynamoRunStore;
  /** The daemon's endpoint now (it changes when a replacement daemon is started). */
  readonly endpoint: string;
  close(): Promise<void>;
}

/** The run store of a state dir: DynamoDB on disk under `<stateDir>/db`, served by a daemon shared between processes. */
export async function openLocalStore(stateDir: string, options: { tableName?: string } = {}): Promise<LocalStore> {
  const tableName = options.tableName ?? DEFAULT_LOCAL_TABLE;
  const { client, endpoint } = createReconnectingClient(stateDir, await discoverDaemon(stateDir));
  await ensureTable(client, tableName);
  // dynalite's cost follows the number of attributes: one JSON attribute halves the time of a write.
  const store = new DynamoRunStore({ client: createDocumentClient(client), tableName, encoding: 'json' });
  return {
    store,
    get endpoint() {
      return endpoint();
    },
    close: async () => client.destroy(),
  };
}
