import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeCliSandbox } from '../support/cli-sandbox.ts';

const sandbox = makeCliSandbox('patch');
const { dir } = sandbox;
afterAll(sandbox.cleanup);

type Report = Record<string, unknown> & { run_id: string; result: unknown; repairs: { source: string }[]; error?: string };
const cli = (argv: string[]) => sandbox.json<Report>(argv);

const workflow = (sendCommand: string, reportCommand: string) => ({
  nodes: [
    { id: 'send', type: 'shell', params: { command: sendCommand } },
    { id: 'report', type: 'shell', params: { command: reportCommand } },
  ],
  edges: [{ from: 'send', to: 'report' }],
  outputs: { out: { source: '${report.stdout}' } },
});

describe('flowmend resume --workflow (a person repairing instead of the LLM)', () => {
  const send = `echo sent >> ${dir}/send.count; echo 42`;

  it('applies a fix to the failed node and resumes; the completed side-effecting node is replayed', async () => {
    writeFileSync(join(dir, 'broken.json'), JSON.stringify(workflow(send, 'echo got ${send.stdout}; exit 3')));
    const failed = await cli(['run', join(dir, 'broken.json'), '--no-repair']);
    expect(failed.code).toBe(1);

    writeFileSync(join(dir, 'fixed.json'), JSON.stringify(workflow(send, 'echo got ${send.stdout}')));
    const resumed = await cli(['resume', failed.json.run_id, '--workflow', join(dir, 'fixed.json')]);
    expect(resumed.code).toBe(0);
    expect(resumed.json.result).toEqual({ out: 'got 42' });
    expect(resumed.json.repairs.map((r) => r.source)).toEqual(['manual']);
    expect(readFileSync(join(dir, 'send.count'), 'utf8')).toBe('sent\n');
  });

  it('refuses a patch that changes a completed node with side effects, and leaves the run as it was', async () => {
    writeFileSync(join(dir, 'broken2.json'), JSON.stringify(workflow(send, 'exit 3')));
    const failed = await cli(['run', join(dir, 'broken2.json'), '--no-repair']);
    writeFileSync(join(dir, 'rewrites-send.json'), JSON.stringify(workflow(`${send}; echo again`, 'echo ok')));
    const refused = await cli(['resume', failed.json.run_id, '--workflow', join(dir, 'rewrites-send.json')]);
    expect(refused.code).toBe(2);
    expect(String(refused.json.error)).toMatch(/send/);
    const status = await cli(['status', failed.json.run_id]);
    expect(status.json.status).toBe('failed');
    expect(status.json.repairs).toEqual([]);
  });
});
