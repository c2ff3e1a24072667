import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CliSandbox, makeCliSandbox } from '../../support/cli-sandbox.ts';

type Report = {
  run_id: string;
  status: string;
  success: boolean;
  result: Record<string, unknown>;
  errors: { code: string; node_id?: string; message: string; fixable: boolean }[];
  waiting?: { kind: string; node_id?: string; wait_id: string; preview?: Record<string, unknown> };
};

const sandbox: CliSandbox = makeCliSandbox('approval');
afterAll(() => sandbox.cleanup());

/** A workflow whose `send` node is gated; it appends to a file, so a test can count how often it ran. */
const gated = (name: string, extra: { errorEdge?: boolean } = {}): string => {
  const sent = join(sandbox.dir, `${name}.sent`);
  const path = join(sandbox.dir, `${name}.json`);
  writeFileSync(
    path,
    JSON.stringify({
      inputs: { to: { type: 'string', default: 'ops@example.com' } },
      nodes: [
        { id: 'draft', type: 'shell', params: { command: 'echo "deploy v2"' } },
        {
          id: 'send',
          type: 'shell',
          approval: 'required',
          params: { command: `echo \${draft.stdout} to \${to} >> ${sent}; echo sent`, env: { API_TOKEN: 'not-for-your-eyes' } },
        },
        ...(extra.errorEdge ? [{ id: 'skipped', type: 'shell', params: { command: 'echo not sent' } }] : []),
      ],
      edges: [{ from: 'draft', to: 'send' }, ...(extra.errorEdge ? [{ from: 'send', to: 'skipped', action: 'error' }] : [])],
    }),
  );
  return path;
};
const sentLines = (name: string): string[] => {
  const path = join(sandbox.dir, `${name}.sent`);
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
};

describe('approval gates ("approval": "required") from the CLI', () => {
  it('pauses before the gated node with its resolved params (secrets redacted), exit 4; approve runs it once, exit 0', async () => {
    const paused = await sandbox.json<Report>(['run', gated('approve')]);
    expect(paused.code).toBe(4);
    expect(paused.json).toMatchObject({ status: 'waiting', waiting: { kind: 'approval', node_id: 'send' } });
    expect(paused.json.waiting?.preview).toEqual({
      command: expect.stringContaining("'deploy v2' to 'ops@example.com'"),
      env: { API_TOKEN: '[redacted]' },
    });
    expect(sentLines('approve')).toEqual([]);
    const listed = await sandbox.json<{ runs: { run_id: string; waiting?: unknown }[] }>(['runs', '--status', 'waiting']);
    expect(listed.json.runs.find((r) => r.run_id === paused.json.run_id)?.waiting).toEqual({ kind: 'approval', node_id: 'send' });
    // resume does not pass a gate: it says the run waits, as before.
    expect((await sandbox.json<Report>(['resume', paused.json.run_id])).code).toBe(4);

    const approved = await sandbox.json<Report>(['approve', paused.json.run_id, '--comment', 'ship it']);
    expect(approved.code).toBe(0);
    expect(approved.json).toMatchObject({ status: 'succeeded', result: { stdout: 'sent' } });
    expect(sentLines('approve')).toEqual(['deploy v2 to ops@example.com']);
    // Answered once: a second answer is refused, and nothing runs again.
    expect((await sandbox.json(['approve', paused.json.run_id, '--deny'])).code).toBe(1);
    expect(sentLines('approve')).toHaveLength(1);
  });

  it('deny stops the node with a non-repairable DENIED (exit 3), or routes its error edge', async () => {
    const paused = await sandbox.json<Report>(['run', gated('deny')]);
    const denied = await sandbox.json<Report>(['approve', paused.json.run_id, '--deny', '--comment', 'not today']);
    expect(denied.code).toBe(3);
    expect(denied.json).toMatchObject({ status: 'failed', errors: [{ code: 'DENIED', node_id: 'send', fixable: false }] });
    expect(denied.json.errors[0]?.message).toContain('not today');
    expect(sentLines('deny')).toEqual([]);

    const routed = await sandbox.json<Report>(['run', gated('deny-edge', { errorEdge: true })]);
    const handled = await sandbox.json<Report>(['approve', routed.json.run_id, '--deny']);
    expect(handled.code).toBe(0);
    expect(handled.json).toMatchObject({ status: 'succeeded', result: { stdout: 'not sent' } });
    expect(sentLines('deny-edge')).toEqual([]);
  });

  it('--auto-approve runs a gated node without pausing; naming a node without a gate is a usage error', async () => {
    const pre = await sandbox.json<Report>(['run', gated('pre'), '--auto-approve', 'send']);
    expect(pre.code).toBe(0);
    expect(sentLines('pre')).toHaveLength(1);
    const typo = await sandbox.json<{ error: string }>(['run', gated('pre'), '--auto-approve', 'sned']);
    expect(typo.code).toBe(2);
    expect(typo.json.error).toContain("'sned'");
  });
});
