import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { boundValue, REDACTED, VIEW_LIMITS } from '../../functions/core/bound-value.ts';
import { WorkflowSchema } from '../../functions/core/ir.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { loadRunView } from '../../functions/core/run-view.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { shellRunner } from '../../functions/nodes/shell.ts';
import { transformRunner } from '../../functions/nodes/transform.ts';

describe('boundValue', () => {
  it('redacts secret-looking keys at any depth, also inside JSON text', () => {
    const out = boundValue({
      headers: { Authorization: 'Bearer x', accept: 'json' },
      stdout: '{"user":{"api_token":"s3cr3t","login":"ada"}}',
      password: 'p',
    }) as Record<string, unknown>;
    expect(out.password).toBe(REDACTED);
    expect(out.headers).toEqual({ Authorization: REDACTED, accept: 'json' });
    expect(out.stdout).toBe(`{"user":{"api_token":"${REDACTED}","login":"ada"}}`);
  });

  it('cuts long strings, long arrays and deep objects, saying how much is left out', () => {
    const out = boundValue({
      text: 'x'.repeat(VIEW_LIMITS.stringChars + 5),
      items: Array.from({ length: 30 }, (_, i) => i),
      deep: { a: { b: { c: { d: { e: 1 } } } } },
    }) as Record<string, unknown>;
    expect(out.text).toMatch(/… \(5 more characters\)$/);
    expect(out.items).toHaveLength(VIEW_LIMITS.arrayItems + 1);
    expect((out.items as unknown[]).at(-1)).toBe('… 5 more items');
    expect(JSON.stringify(out.deep)).toContain('{…}');
  });
});

describe('loadRunView', () => {
  let dir: string | undefined;
  afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

  it('counts the visits of a loop and how often each edge was taken, and marks nodes never reached as skipped', async () => {
    dir = mkdtempSync(join(tmpdir(), 'flowmend-view-'));
    const counter = join(dir, 'n');
    const store = new MemoryRunStore();
    const host = new LocalHost({ store, runners: [shellRunner, transformRunner], retryIntervalMs: 0 });
    // check fails (action "error") until it has run three times; each failure goes round through bump.
    const workflow = WorkflowSchema.parse({
      nodes: [
        { id: 'check', type: 'shell', params: { command: `n=$(cat ${counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${counter}; [ $n -ge 3 ]` } },
        { id: 'bump', type: 'transform', params: { input: '${check.exit_code}', expression: '$ + 1' } },
        { id: 'done', type: 'transform', params: { input: '${check.exit_code}', expression: '"ok"' } },
        { id: 'never', type: 'transform', params: { input: '${check.exit_code}', expression: '$' } },
      ],
      edges: [
        { from: 'check', to: 'bump', action: 'error' },
        { from: 'bump', to: 'check' },
        { from: 'check', to: 'done' },
        { from: 'done', to: 'never', action: 'unused' },
      ],
    });
    const report = await host.start({ workflow, workflowName: 'loop', params: {}, repairEnabled: false, maxRepairs: 0 });
    expect(report.status).toBe('succeeded');

    const view = await loadRunView(store, report.run_id);
    const node = (id: string) => view?.graph.nodes.find((n) => n.id === id);
    expect(node('check')).toMatchObject({ status: 'completed', visits: 3, action: 'default' });
    expect(node('bump')).toMatchObject({ status: 'completed', visits: 2 });
    expect(node('done')).toMatchObject({ status: 'completed', visits: 1, outputs: { result: 'ok' } });
    expect(node('never')).toMatchObject({ status: 'skipped', visits: 0 });
    expect(view?.graph.edges.map((e) => `${e.from}-${e.action}->${e.to}: ${e.taken}`)).toEqual([
      'check-error->bump: 2',
      'bump-default->check: 2',
      'check-default->done: 1',
      'done-unused->never: 0',
    ]);
    expect(view?.versions.map((v) => v.source)).toEqual(['original']);
  });

  it('is undefined for an unknown run', async () => {
    expect(await loadRunView(new MemoryRunStore(), 'no-such-run')).toBeUndefined();
  });
});
