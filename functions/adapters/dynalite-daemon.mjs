// The local DynamoDB daemon: dynalite over LevelDB in <stateDir>/db on 127.0.0.1:<ephemeral port>, advertised in
// <stateDir>/dynalite.json. Plain JS so it starts without tsx. Started by local-dynamo.ts; exits when idle.
// Usage: node dynalite-daemon.mjs <stateDir>
import { mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

/** Exit code of a daemon that found the database locked by another daemon (it lost a start race). */
const LOST_LOCK = 75;

const stateDir = resolve(process.argv[2] ?? '.flowmend');
const infoPath = join(stateDir, 'dynalite.json');
const idleSeconds = Number(process.env.FLOWMEND_DAEMON_IDLE_S);
const idleMs = (Number.isFinite(idleSeconds) && idleSeconds > 0 ? idleSeconds : 30) * 1000;

const log = (message) => process.stderr.write(`${new Date().toISOString()} dynalite-daemon[${process.pid}] ${message}\n`);

let advertised = false;
let stopping = false;

const removeInfoIfOurs = () => {
  try {
    if (JSON.parse(readFileSync(infoPath, 'utf8')).pid === process.pid) unlinkSync(infoPath);
  } catch {
    // absent or unreadable: nothing of ours to remove
  }
};

const dbPath = join(stateDir, 'db');
const dynaliteRequire = createRequire(createRequire(import.meta.url).resolve('dynalite'));

/** Opens the database alone to tell a lock held by another daemon from a real failure. */
const diagnoseOpenFailure = async () => {
  const { Level } = dynaliteRequire('level');
  const db = new Level(dbPath);
  try {
    await db.open();
    await db.close();
    return { exitCode: LOST_LOCK, reason: 'the database opens now; the caller starts a daemon again' };
  } catch (error) {
    if (error?.cause?.code === 'LEVEL_LOCKED') return { exitCode: LOST_LOCK, reason: 'another daemon holds the database' };
    return { exitCode: 1, reason: `the database does not open: ${error?.cause?.message ?? error?.message}` };
  }
};

let diagnosing = false;
// LevelDB opens lazily: a daemon that lost the lock learns it from its first request, as a throw inside dynalite.
process.on('uncaughtException', (error) => {
  if (!advertised && String(error?.code).startsWith('LEVEL_')) {
    if (diagnosing) return;
    diagnosing = true;
    diagnoseOpenFailure().then(({ exitCode, reason }) => {
      log(`${reason}; exiting`);
      process.exit(exitCode);
    });
    return;
  }
  log(`crashed: ${error?.stack ?? error}`);
  removeInfoIfOurs();
  process.exit(1);
});

mkdirSync(dbPath, { recursive: true });
const dynalite = createRequire(import.meta.url)('dynalite');
const server = dynalite({ path: dbPath, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });

let lastActivity = Date.now();
let inFlight = 0;
server.on('request', (_req, res) => {
  inFlight++;
  lastActivity = Date.now();
  res.on('close', () => {
    inFlight--;
    lastActivity = Date.now();
  });
});

const listTables = (port) =>
  new Promise((resolvePromise, reject) => {
    const req = request(
      {
        host: '127.0.0.1', port, method: 'POST', path: '/',
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          'x-amz-target': 'DynamoDB_20120810.ListTables',
          'x-amz-date': '20200101T000000Z',
          authorization: 'AWS4-HMAC-SHA256 Credential=local/20200101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolvePromise(res.statusCode));
      },
    );
    req.on('error', reject);
    req.end('{}');
  });

const shutdown = (reason) => {
  if (stopping) return;
  stopping = true;
  log(`stopping (${reason})`);
  removeInfoIfOurs();
  setTimeout(() => server.closeAllConnections(), 2000).unref();
  setTimeout(() => {
    log('forced exit: the database did not close within 10 s');
    process.exit(1);
  }, 10_000).unref();
  // dynalite's close() closes the HTTP server, then LevelDB.
  server.close((error) => {
    if (error) log(`close failed: ${error.message}`);
    process.exit(error ? 1 : 0);
  });
  server.closeIdleConnections();
};

process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));

server.listen(0, '127.0.0.1', async () => {
  const { port } = server.address();
  const status = await listTables(port).catch((error) => error.message);
  if (status !== 200) {
    if (diagnosing) return;
    log(`the database does not answer (${status}); exiting`);
    process.exit(LOST_LOCK);
  }
  const tmp = `${infoPath}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify({ pid: process.pid, port, startedAt: new Date().toISOString() }));
  renameSync(tmp, infoPath);
  advertised = true;
  lastActivity = Date.now();
  log(`serving ${join(stateDir, 'db')} on 127.0.0.1:${port}, idle exit after ${idleMs / 1000} s`);
  setInterval(() => {
    if (inFlight === 0 && Date.now() - lastActivity >= idleMs) shutdown('idle');
  }, Math.min(1000, idleMs / 4));
});
