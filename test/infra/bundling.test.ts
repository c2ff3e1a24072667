import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { synthFlowmend } from '../support/synth-flowmend.ts';
import { asCfn } from './stack-helpers.ts';

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

describe('Lambda bundles (real esbuild, as cdk deploy builds them)', () => {
  it('are ESM bundles that load and run under plain Node', async () => {
    const outdir = await mkdtemp(join(tmpdir(), 'flowmend-cdk-'));
    dirs.push(outdir);
    const cfn = asCfn(synthFlowmend({}, { bundle: true, outdir }).template);
    const functions = Object.entries(cfn.Resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function');
    const assetDir = (id: string) => {
      const code = cfn.Resources[id]?.Properties?.Code as { S3Key: string };
      return join(outdir, `asset.${code.S3Key.replace(/\.zip$/, '')}`);
    };
    for (const [id] of functions) {
      const entry = join(assetDir(id), 'index.mjs');
      expect(existsSync(entry), id).toBe(true);
      const loaded = (await import(pathToFileURL(entry).href)) as { handler?: unknown };
      expect(typeof loaded.handler, id).toBe('function');
    }

    const transformId = functions.map(([id]) => id).find((id) => id.startsWith('RunTransform')) ?? '';
    const bundle = (await import(pathToFileURL(join(assetDir(transformId), 'index.mjs')).href)) as { handler: (e: unknown) => Promise<unknown> };
    const result = await bundle.handler({
      kind: 'run',
      runId: 'run-bundle-1',
      owner: 'exec-1',
      seq: 1,
      node: { id: 'sum', type: 'transform', params: { expression: '$sum($.n)', input: { n: [1, 2, 3] } }, cacheKey: 'k', timeoutS: 10 },
    });
    expect(result).toMatchObject({ kind: 'ok', outputs: { result: 6 } });
    // Eight real esbuild runs: about 20 s of CPU, several times that on a busy 2-core machine.
  }, 240_000);
});
