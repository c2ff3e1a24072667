import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunnerResult } from '../../../functions/core/index.ts';
import { secretReference } from '../../../functions/core/secret-source.ts';
import { makeRunNodeHandler } from '../../../functions/hosts/lambda/run-node.ts';
import { codeRunner } from '../../../functions/nodes/code.ts';
import { writePythonRunner } from '../../../infra/python-runner.ts';

// The RunCode Lambda's Python handler (AWS) and the local host's code runner on the same events: the two
// hosts must answer alike. The Python file runs as the Lambda runtime runs it: imported, event in, result out.
let dir: string;
let server: Server;
let base: string;
const blobs = new Map<string, string>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flowmend-run-code-'));
  writePythonRunner(dir);
  // A presigned URL's stand-in: GET serves what was put, PUT keeps the body.
  server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    if (req.method === 'PUT') {
      blobs.set(req.url ?? '', body);
      res.writeHead(200).end();
    } else if (blobs.has(req.url ?? '')) res.writeHead(200).end(blobs.get(req.url ?? ''));
    else res.writeHead(404).end('no such blob');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

const PYTHON_INVOKE = 'import json, sys; sys.path.insert(0, sys.argv[1]); import run_code; print(json.dumps(run_code.handler(json.load(sys.stdin), None)))';

/** The Lambda runtime's way: import the module, call handler(event, context), JSON of what it returns (or of what it raised). */
const invokePython = (event: unknown, env: NodeJS.ProcessEnv = {}): Promise<RunnerResult | { errorType: string; errorMessage: string }> =>
  new Promise((resolve, reject) => {
    const child = execFile('python3', ['-c', PYTHON_INVOKE, dir], { env: { PATH: process.env.PATH, ...env } }, (error, stdout, stderr) => {
      if (!error) resolve(JSON.parse(stdout));
      else {
        const raised = /^(?:\w+\.)?(\w+): (.*)$/m.exec(stderr.trim().split('\n').at(-1) ?? '');
        if (raised) resolve({ errorType: raised[1] as string, errorMessage: raised[2] as string });
        else reject(new Error(stderr));
      }
    });
    child.stdin?.end(JSON.stringify(event));
  });

const invokeLocal = (event: unknown): Promise<RunnerResult> => makeRunNodeHandler(codeRunner)(event);

const event = (params: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  kind: 'run',
  runId: 'run-000001',
  owner: 'o-1',
  seq: 3,
  node: { id: 'c', type: 'code', params, cacheKey: 'k', timeoutS: 30, ...extra },
});

/** What both hosts must agree on: the kind, outputs, action and the error's code, message and type (not timings, not tracebacks' file names). */
const comparable = (result: unknown) => {
  const r = result as RunnerResult & { error?: { code: string; message: string; details?: { type?: string } } };
  return r.kind === 'ok'
    ? { kind: r.kind, outputs: r.outputs, action: r.action }
    : {
        kind: r.kind,
        outputs: r.outputs,
        code: r.error?.code,
        message: r.error?.code === 'PARAMS_INVALID' ? undefined : r.error?.message,
        type: r.error?.details?.type,
      };
};

describe('the RunCode Lambda (Python) and the local code runner', () => {
  it.each([
    ['a result from typed inputs', { code: 'result: int = x * 2', inputs: { x: 21 } }],
    ['prints, and next as the action', { code: 'print("hi")\nprint("err", file=__import__("sys").stderr)\nnext = "big"\nresult = {"n": 1}' }],
    ['an exception (the node fails, prints kept)', { code: 'print("before")\nraise ValueError("no good")' }],
    ['a JSON-text input annotated dict is parsed', { code: 'data: dict\nresult = data["a"]', inputs: { data: '{"a": [1, 2]}' } }],
    ['a wrongly typed input', { code: 'n: int\nresult = n', inputs: { n: 'seven' } }],
    ['a syntax error', { code: 'result = (' }],
    ['a timeout', { code: 'import time\ntime.sleep(5)', timeout: 0.5 }],
    ['params the schema refuses', { code: '', inputs: { 'not-an-identifier': 1 } }],
  ])('agree on %s', async (_what, params) => {
    const [python, local] = await Promise.all([invokePython(event(params)), invokeLocal(event(params))]);
    expect(comparable(python)).toEqual(comparable(local));
  });

  it('agree on params handed over by reference (a presigned GET, checked against its hash)', async () => {
    const body = JSON.stringify({ code: 'result = len(text)', inputs: { text: 'x'.repeat(40_000) } });
    blobs.set('/params/3.json', body);
    const ref = { key: 'runs/r-1/params/3.json', bytes: body.length, sha256: createHash('sha256').update(body).digest('hex') };
    const byRef = event({}, { paramsRef: { url: `${base}/params/3.json`, ref } });
    const [python, local] = await Promise.all([invokePython(byRef), invokeLocal(byRef)]);
    expect(comparable(python)).toEqual({ kind: 'ok', outputs: { result: 40_000, stdout: '', stderr: '' }, action: 'default' });
    expect(comparable(local)).toEqual(comparable(python));
    // A body that does not match its reference is refused (the engine's CorruptItemError), never run.
    blobs.set('/params/3.json', body.replace('len(text)', 'len(text) + 1'));
    expect(await invokePython(byRef)).toMatchObject({ errorType: 'CorruptItemError' });
  });

  it('agree on outputs too large for the state payload: they go up to the upload URL, a reference comes back', async () => {
    const big = event({ code: 'result = "y" * 300000' }, { upload: { url: `${base}/up/py`, key: 'runs/r-1/steps/3.json' } });
    const python = (await invokePython(big)) as RunnerResult;
    const local = await invokeLocal({ ...big, node: { ...big.node, upload: { url: `${base}/up/local`, key: 'runs/r-1/steps/3.json' } } });
    expect(python.outputs).toEqual(local.outputs);
    expect(python.outputs).toEqual({ $blob: expect.objectContaining({ key: 'runs/r-1/steps/3.json', bytes: 300_037 }) });
    expect(JSON.parse(blobs.get('/up/py') ?? '{}')).toEqual(JSON.parse(blobs.get('/up/local') ?? '{}'));
  });
});

describe('the RunCode Lambda (Python) alone', () => {
  it("runs the user's code without the Lambda's variables: no AWS credentials, nothing of the engine", async () => {
    const env = { AWS_ACCESS_KEY_ID: 'AKIACANARY', AWS_SECRET_ACCESS_KEY: 'canary-secret', FLOWMEND_TABLE: 't', LANG: 'C.UTF-8' };
    const result = await invokePython(event({ code: 'import os\nresult = sorted(os.environ)' }), env);
    expect(result).toMatchObject({ kind: 'ok' });
    const names = (result as RunnerResult).outputs?.result as string[];
    expect(names.filter((n) => /^(AWS_|FLOWMEND_)/.test(n))).toEqual([]);
    expect(names).toContain('LANG');
  });

  it("leaves no credential in the handler's start-up environment, which the code could read as /proc/<ppid>/environ", async () => {
    const env = { AWS_SECRET_ACCESS_KEY: 'canary-secret-5b1e', AWS_SESSION_TOKEN: 'canary-session-0c3d', LANG: 'C.UTF-8' };
    const result = await invokePython(event({ code: 'import os\nresult = open(f"/proc/{os.getppid()}/environ", "rb").read().decode("latin-1")' }), env);
    const seen = (result as RunnerResult).outputs?.result as string;
    expect(seen).toContain('AWS_SECRET_ACCESS_KEY=');
    for (const value of Object.values(env).filter((v) => v.startsWith('canary'))) expect(seen).not.toContain(value);
  });

  it('refuses a secret input (`from`) in its params, saying where such a value goes instead', async () => {
    const result = await invokePython(event({ code: 'result = t', inputs: { t: secretReference('ssm:/flowmend/token') } }));
    expect(result).toMatchObject({ kind: 'failed', error: { code: 'SECRET_INPUT_UNSUPPORTED', message: expect.stringContaining('shell node') } });
  });

  it('throws InvalidInputError for an event that is not a code node, as every runner does', async () => {
    expect(await invokePython({ ...event({ code: 'result = 1' }), node: { id: 'x', type: 'shell', params: {} } })).toMatchObject({
      errorType: 'InvalidInputError',
    });
  });
});
