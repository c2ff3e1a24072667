import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startDynalite } from '../../functions/adapters/dynalite-server.ts';
import { runCli } from '../../functions/hosts/cli/commands.ts';
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

describe('a shell output cut at its limit', () => {
  it('is a warning on the node and in the report, and the next node reads only what the command wrote', async () => {
    const workflow = join(dir, 'cut.json');
    writeFileSync(
      workflow,
      JSON.stringify({
        nodes: [
          { id: 'big', type: 'shell', params: { command: "head -c 5000 /dev/zero | tr '\\0' x" } },
          { id: 'measure', type: 'transform', params: { expression: '$length($)', input: '${big.stdout}' } },
        ],
        edges: [{ from: 'big', to: 'measure' }],
        outputs: { length: { source: '${measure.result}' } },
      }),
    );
    let stdout = '';
    const code = await runCli(['run', workflow, '--state-dir', stateDir, '--output-format', 'json'], {
      stdout: (t) => (stdout += t),
      stderr: () => {},
      env: { FLOWMEND_MAX_OUTPUT_BYTES: '1000' },
    });
    const json = JSON.parse(stdout) as Report & { warnings: { node_id: string; code: string }[] };
    expect(code).toBe(0);
    expect(json.result).toEqual({ length: 1000 });
    expect(json.warnings).toEqual([expect.objectContaining({ node_id: 'big', code: 'OUTPUT_TRUNCATED' })]);
  });
});

describe('a run result larger than a DynamoDB item (400 KB)', () => {
  it('goes to a blob like any large output: the run succeeds on DynamoDB, and status and runs read the whole result back', async () => {
    const dynalite = await startDynalite();
    try {
      const workflow = join(dir, 'large-result.json');
      writeFileSync(
        workflow,
        JSON.stringify({
          nodes: [{ id: 'big', type: 'shell', params: { command: 'yes yyyyyyyyy | head -c 300000' } }],
          // Two outputs of 300,000 characters: each node output fits an item, the result (600 KB) does not.
          outputs: { first: { source: '${big.stdout}' }, second: { source: '${big.stdout}' } },
        }),
      );
      const dynamoState = join(dir, 'dynamo-state');
      const onDynamo = async (argv: string[]) => {
        let stdout = '';
        const code = await runCli([...argv, '--store', 'dynamodb', '--table', 'large', '--state-dir', dynamoState, '--output-format', 'json'], {
          stdout: (t) => (stdout += t),
          stderr: () => {},
          env: { AWS_ENDPOINT_URL: dynalite.endpoint },
        });
        return { code, json: JSON.parse(stdout) as Report & { runs?: { run_id: string }[] } };
      };
      const run = await onDynamo(['run', workflow]);
      expect(run.code, JSON.stringify(run.json).slice(0, 500)).toBe(0);
      // 30,000 lines of ten characters; the shell node drops the last newline.
      const big = 'yyyyyyyyy\n'.repeat(30_000).slice(0, -1);
      expect(run.json.result).toEqual({ first: big, second: big });
      expect(existsSync(join(dynamoState, 'blobs', 'runs', run.json.run_id, 'result.json'))).toBe(true);
      const status = await onDynamo(['status', run.json.run_id]);
      expect(status).toMatchObject({ code: 0, json: { status: 'succeeded', result: { first: big, second: big } } });
      expect((await onDynamo(['runs'])).code).toBe(0);
    } finally {
      await dynalite.close();
    }
  });
});
