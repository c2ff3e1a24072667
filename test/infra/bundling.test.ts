import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { secretReference } from '../../functions/core/index.ts';
import { SECRET_RESOLVER_FILE } from '../../functions/hosts/lambda/bundled-secret-resolver.ts';
import { PYTHON_CODE_WRAPPER } from '../../functions/nodes/code-python.ts';
import type { CfnTemplate } from '../support/cfn-asl.ts';
import { startFakeSecrets } from '../support/fake-secrets.ts';
import { synthFlowmend } from '../support/synth-flowmend.ts';
import { asCfn } from './stack-helpers.ts';

const run = promisify(execFile);
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

/**
 * The synthesized stack with its bundles: the output of the `cdk synth` that scripts/test.sh has just
 * run (it sets FLOWMEND_SYNTH_OUT), or, when vitest runs alone, a synth of our own into a temporary dir.
 */
let synthesis: Promise<{ outdir: string; cfn: CfnTemplate }> | undefined;
const synthesized = (): Promise<{ outdir: string; cfn: CfnTemplate }> => (synthesis ??= synthesize());
const synthesize = async (): Promise<{ outdir: string; cfn: CfnTemplate }> => {
  const fromScript = process.env.FLOWMEND_SYNTH_OUT;
  if (fromScript && existsSync(join(fromScript, 'Flowmend.template.json'))) {
    return { outdir: fromScript, cfn: JSON.parse(readFileSync(join(fromScript, 'Flowmend.template.json'), 'utf8')) as CfnTemplate };
  }
  const outdir = await mkdtemp(join(tmpdir(), 'flowmend-cdk-'));
  dirs.push(outdir);
  return { outdir, cfn: asCfn(synthFlowmend({}, { bundle: true, outdir }).template) };
};

/** The directory of a function's bundle in the cloud assembly. */
const assetDirOf = (outdir: string, cfn: CfnTemplate, id: string): string => {
  const code = cfn.Resources[id]?.Properties?.Code as { S3Key: string };
  return join(outdir, `asset.${code.S3Key.replace(/\.zip$/, '')}`);
};
const functionIds = (cfn: CfnTemplate, prefix: string): string[] =>
  Object.entries(cfn.Resources)
    .filter(([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith(prefix))
    .map(([id]) => id);

describe('Lambda bundles (real esbuild, as cdk deploy builds them)', () => {
  it('are ESM bundles that load and run under plain Node', async () => {
    const { outdir, cfn } = await synthesized();
    // The Node functions (the code runner is Python: test/hosts/lambda/run-code-python.test.ts runs its files).
    const functions = Object.entries(cfn.Resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function' && String(r.Properties?.Runtime).startsWith('nodejs'));
    const assetDir = (id: string) => {
      const code = cfn.Resources[id]?.Properties?.Code as { S3Key: string };
      return join(outdir, `asset.${code.S3Key.replace(/\.zip$/, '')}`);
    };
    // Plain Node loads the bundles in a child process, as Lambda does: through vitest, each multi-MB
    // bundle would first go through its transform pipeline, which costs more than the load itself.
    const entries = Object.fromEntries(functions.map(([id]) => [id, pathToFileURL(join(assetDir(id), 'index.mjs')).href]));
    const transformId = functions.map(([id]) => id).find((id) => id.startsWith('RunTransform')) ?? '';
    const event = {
      kind: 'run',
      runId: 'run-bundle-1',
      owner: 'exec-1',
      seq: 1,
      node: { id: 'sum', type: 'transform', params: { expression: '$sum($.n)', input: { n: [1, 2, 3] } }, cacheKey: 'k', timeoutS: 10 },
    };
    const script = `
      const entries = ${JSON.stringify(entries)};
      const handlers = {};
      for (const [id, url] of Object.entries(entries)) handlers[id] = typeof (await import(url)).handler;
      const result = await (await import(entries[${JSON.stringify(transformId)}])).handler(${JSON.stringify(event)});
      process.stdout.write(JSON.stringify({ handlers, result }));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { maxBuffer: 1 << 20 });
    const { handlers, result } = JSON.parse(stdout) as { handlers: Record<string, string>; result: unknown };
    for (const [id] of functions) {
      expect(existsSync(join(assetDir(id), 'index.mjs')), id).toBe(true);
      expect(handlers[id], id).toBe('function');
    }
    expect(result).toMatchObject({ kind: 'ok', outputs: { result: 6 } });
    // Eight real esbuild runs: about 20 s of CPU, several times that on a busy 2-core machine.
  }, 240_000);

  it('the Advance bundle holds what one engine step uses: no AWS SDK client, no JSONata, no OpenTelemetry SDK, no node credential chain, identifiers kept, under 480 KB', async () => {
    const { outdir, cfn } = await synthesized();
    const [, advance] = Object.entries(cfn.Resources).find(([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith('AdvanceFunction')) ?? [];
    const code = advance?.Properties?.Code as { S3Key: string };
    const bundle = readFileSync(join(outdir, `asset.${code.S3Key.replace(/\.zip$/, '')}`, 'index.mjs'), 'utf8');
    // The table through its JSON protocol (functions/adapters/dynamo-json-client.ts).
    expect(bundle.includes('DynamoDB_20120810.')).toBe(true);
    // Markers: the DynamoDB client's and document client's command names, the S3 client's, a JSONata error code, the ini provider's log line.
    // ... nor OpenTelemetry's SDK, which has a file of its own (functions/hosts/lambda/bundled-otel.ts).
    for (const absent of ['PutItemCommand', 'DynamoDBDocumentClient', 'PutObjectCommand', 'S0101', 'credential-provider-ini', 'OTLPTraceExporter'])
      expect(bundle.includes(absent), absent).toBe(false);
    // The node specs, not their runners: the shell runner's spawn error, the http runner's body cap.
    for (const runnerOnly of ['SPAWN_FAILED', 'RESPONSE_TOO_LARGE']) expect(bundle.includes(runnerOnly), runnerOnly).toBe(false);
    // Identifiers are not minified (infra/bundle-options.ts LAMBDA_MINIFY: it imports faster): core's functions keep their names.
    for (const name of ['walkFromStart=async', 'advanceOne=async']) expect(bundle.includes(name), name).toBe(true);
    // 245 KB minified when the SDK's DynamoDB client left it; 273 KB with zod/mini and identifiers kept; 347 KB with
    // Powertools Logger and Metrics and the run observations (issue 31's JSON lines and EMF); 414 KB with the
    // waits' core (pausing, answers, wake claims, held repairs: issue 28): ~15% for growth.
    expect(Buffer.byteLength(bundle)).toBeLessThan(480 * 1024);
  }, 240_000);

  it('the StartRun bundle holds what starting a run uses: DynamoDB (its JSON protocol) and the Step Functions client; no SDK DynamoDB client, S3, JSONata, Anthropic, secrets or node credential chain; under 760 KB', async () => {
    const { outdir, cfn } = await synthesized();
    const [startRun] = functionIds(cfn, 'StartRunFunction');
    const bundle = readFileSync(join(assetDirOf(outdir, cfn, startRun ?? ''), 'index.mjs'), 'utf8');
    for (const present of ['DynamoDB_20120810.', 'StartExecution']) expect(bundle.includes(present), present).toBe(true);
    // Markers: the DynamoDB and S3 clients' command names, a JSONata error code, the Anthropic SDK's version header, the SSM client, the ini provider's log line.
    for (const absent of [
      'PutItemCommand',
      'DynamoDBDocumentClient',
      'PutObjectCommand',
      'S0101',
      'anthropic-version',
      '"GetParameter"',
      'credential-provider-ini',
    ])
      expect(bundle.includes(absent), absent).toBe(false);
    // 411 KB minified when the SDK's DynamoDB client left it; 571 KB with identifiers kept (the SFN client's names);
    // 687 KB with waits' gates, flow control's start decisions and the run observations (issues 28, 31, 32): ~10% for growth.
    expect(Buffer.byteLength(bundle)).toBeLessThan(760 * 1024);
  }, 240_000);

  it("the code runner's asset is its Python handler and the local host's own wrapper, byte for byte", async () => {
    const { outdir, cfn } = await synthesized();
    const [runCode] = functionIds(cfn, 'RunCode');
    const dir = assetDirOf(outdir, cfn, runCode ?? '');
    expect(readFileSync(join(dir, 'code_wrapper.py'), 'utf8')).toBe(PYTHON_CODE_WRAPPER);
    expect(readFileSync(join(dir, 'run_code.py'), 'utf8')).toContain('def handler(event, context=None):');
  }, 240_000);

  it('a runner bundle holds no Secrets Manager or SSM client; its side file does, and reads a secret input when a node has one', async () => {
    const { outdir, cfn } = await synthesized();
    // The Node runners (RunCode is Python and reads no secret: run_code.py refuses them).
    const runners = functionIds(cfn, 'Run').filter((id) => !id.startsWith('RunState') && !id.startsWith('RunCode'));
    expect(runners.length).toBeGreaterThanOrEqual(5);
    for (const id of runners) {
      const dir = assetDirOf(outdir, cfn, id);
      // Markers: the operation names each client's commands carry (booleans: a failure must not print a bundle).
      const bundle = readFileSync(join(dir, 'index.mjs'), 'utf8');
      const side = readFileSync(join(dir, SECRET_RESOLVER_FILE), 'utf8');
      for (const marker of ['"GetParameter"', '"GetSecretValue"']) {
        // RunLlm keeps its own Secrets Manager client: it reads the Anthropic key on every cold start.
        if (!(id.startsWith('RunLlm') && marker === '"GetSecretValue"')) expect(bundle.includes(marker), `${id} index.mjs has ${marker}`).toBe(false);
        expect(side.includes(marker), `${id} ${SECRET_RESOLVER_FILE} has ${marker}`).toBe(true);
      }
      // Nor zod: the side file takes only core's error classes (infra/side-bundle.ts), the handler's bundle has zod already.
      expect(side.includes('"$ZodObject"'), `${id} ${SECRET_RESOLVER_FILE} has zod`).toBe(false);
    }
    // The deployed layout end to end: the bundled transform runner loads its side file and reads an SSM
    // parameter (a loopback fake of SSM's API) for a node whose params refer to one.
    const fake = await startFakeSecrets();
    try {
      fake.parameters.set('/flowmend/inputs/n', '41');
      const transform = runners.find((id) => id.startsWith('RunTransform')) ?? '';
      const event = {
        kind: 'run',
        runId: 'run-bundle-2',
        owner: 'exec-1',
        seq: 1,
        node: {
          id: 'add',
          type: 'transform',
          params: { expression: '$number($.n) + 1', input: { n: secretReference('ssm:/flowmend/inputs/n') } },
          cacheKey: 'k',
          timeoutS: 10,
        },
      };
      const url = pathToFileURL(join(assetDirOf(outdir, cfn, transform), 'index.mjs')).href;
      const script = `process.stdout.write(JSON.stringify(await (await import(${JSON.stringify(url)})).handler(${JSON.stringify(event)})));`;
      const env = {
        PATH: process.env.PATH ?? '',
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'x',
        AWS_SECRET_ACCESS_KEY: 'x',
        AWS_ENDPOINT_URL_SSM: fake.endpoint,
      };
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { env });
      expect(JSON.parse(stdout)).toMatchObject({ kind: 'ok', outputs: { result: 42 } });
      expect(fake.calls).toEqual(['AmazonSSM.GetParameter /flowmend/inputs/n']);
    } finally {
      await fake.close();
    }
  }, 240_000);
});
