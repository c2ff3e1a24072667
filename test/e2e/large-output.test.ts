import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeCliSandbox } from '../support/cli-sandbox.ts';

const sandbox = makeCliSandbox('large');
const { dir, stateDir } = sandbox;
afterAll(sandbox.cleanup);

type Report = { status: string; result: Record<string, unknown>; run_id: string };
const cli = async (argv: string[]) => {
  const { code, json } = await sandbox.json<Report>(argv);
  return { code, report: json };
};

describe('a node output larger than a DynamoDB item (400 KB)', () => {
  it('is kept as a blob under the state dir and read back transparently, also by a later resume', async () => {
    const workflow = join(dir, 'large.json');
    writeFileSync(
      workflow,
      JSON.stringify({
        nodes: [
          // 600,000 characters of stdout: over the 400 KB item limit on its own.
          { id: 'big', type: 'shell', params: { command: "head -c 600000 /dev/zero | tr '\\\\0' x" } },
          { id: 'measure', type: 'transform', params: { expression: '$length($)', input: '${big.stdout}' } },
          { id: 'gate', type: 'shell', params: { command: `test -f ${dir}/go` } },
        ],
        edges: [
          { from: 'big', to: 'measure' },
          { from: 'measure', to: 'gate' },
        ],
        outputs: { length: { source: '${measure.result}' } },
      }),
    );
    const failed = await cli(['run', workflow, '--no-repair']);
    expect(failed.code).toBe(1);
    expect(readdirSync(join(stateDir, 'blobs'), { recursive: true }).length).toBeGreaterThan(0);

    // The resume replays 'big' and 'measure' from the store: the large output comes back from its blob.
    writeFileSync(join(dir, 'go'), '');
    const resumed = await cli(['resume', failed.report.run_id]);
    expect(resumed.code).toBe(0);
    expect(resumed.report.result).toEqual({ length: 600_000 });
    expect(existsSync(join(stateDir, 'flowmend.db'))).toBe(true);
  });
});
