// The http node over TLS, against an https server on 127.0.0.1 whose certificate (made here with openssl)
// no public CA signed: the node verifies certificates, and a run of the bin, run as a program, trusts a CA a
// person adds through NODE_EXTRA_CA_CERTS (the bin hands it to the CLI, which reads it at its first TLS context).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunnerResult } from '../../functions/core/node-type.ts';
import { httpRunner } from '../../functions/nodes/http.ts';
import { makeTempDir, REPO, writeWorkflow } from '../support/cli-process.ts';
import { runWithParams } from '../support/run-with-params.ts';
import { selfSignedCert } from '../support/self-signed-cert.ts';

const dir = makeTempDir('http-tls');
const { cert, key } = selfSignedCert(dir);
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer({ cert: readFileSync(cert), key: readFileSync(key) }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"secure":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** The bin run as a program (its shell line decides which variables Node starts with), without blocking this process's server. */
const program = (args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(join(REPO, 'bin', 'flowmend.cjs'), args, { env: { ...process.env, FLOWMEND_STATE_DIR: '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });

describe('the http node over TLS', () => {
  it('refuses a certificate no trusted CA signed, naming why', async () => {
    const result: RunnerResult = await runWithParams(httpRunner, { url }, { runId: 'tls', nodeId: 'get', seq: 1, cacheKey: 'k' });
    expect(result.kind).toBe('failed');
    if (result.kind !== 'failed') return;
    expect(result.error).toMatchObject({ code: 'REQUEST_FAILED', details: { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' } });
    expect(result.error.message).toContain('self-signed certificate');
  });

  it('trusts a CA given in NODE_EXTRA_CA_CERTS, in a run of the bin', async () => {
    const workflow = writeWorkflow(dir, 'tls', { nodes: [{ id: 'get', type: 'http', params: { url } }] });
    const run = await program(['run', workflow, '--output-format', 'json', '--state-dir', join(dir, 'state')], { NODE_EXTRA_CA_CERTS: cert });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'succeeded', result: { response: { secure: true } } });
  });
});
