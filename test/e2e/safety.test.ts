import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type WorkflowInput, WorkflowSchema } from '../../functions/core/ir.ts';
import { DEFAULT_LIMITS, type Limits } from '../../functions/core/limits.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import type { RunItem } from '../../functions/core/run-model.ts';
import type { RunReport } from '../../functions/core/run-report.ts';
import type { RunWriteCondition } from '../../functions/core/run-store.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { writeWorkflow } from '../support/cli-process.ts';
import { makeCliSandbox } from '../support/cli-sandbox.ts';

const sandbox = makeCliSandbox('safety');
afterAll(() => sandbox.cleanup());

const run = (workflow: WorkflowInput, params: Record<string, unknown> = {}, options: { store?: MemoryRunStore; limits?: Limits } = {}): Promise<RunReport> =>
  new LocalHost({ store: options.store ?? new MemoryRunStore(), ...(options.limits ? { runLimits: options.limits } : {}) }).start({
    workflow: WorkflowSchema.parse(workflow),
    workflowName: 'safety',
    params,
    repairEnabled: false,
    maxRepairs: 0,
  });

describe('shell injection through the real host', () => {
  it('keeps hostile inputs and upstream outputs as data in every quoting context', async () => {
    const mark = (n: number) => join(sandbox.dir, `pwned${n}`);
    const ok = await run(
      {
        inputs: { name: { type: 'string' }, who: { type: 'string' } },
        nodes: [
          { id: 'src', type: 'shell', params: { command: `printf '%s' 'x; touch ${mark(1)}'` } },
          { id: 'use', type: 'shell', params: { command: 'printf \'[%s]\' ${name} "${name}" \'${name}\' ${src.stdout} "$(printf %s ${src.stdout})"' } },
          { id: 'hello', type: 'shell', params: { command: 'echo "Hello ${who}"' } },
        ],
        edges: [
          { from: 'src', to: 'use' },
          { from: 'use', to: 'hello' },
        ],
        outputs: { used: { source: '${use.stdout}' }, hello: { source: '${hello.stdout}' } },
      },
      { name: `$(touch ${mark(2)})`, who: 'Ada' },
    );
    expect(ok.status).toBe('succeeded');
    const name = `$(touch ${mark(2)})`;
    const src = `x; touch ${mark(1)}`;
    expect(ok.result).toEqual({ used: `[${name}][${name}][${name}][${src}][${src}]`, hello: 'Hello Ada' });
    expect(readdirSync(sandbox.dir).filter((f) => f.startsWith('pwned'))).toEqual([]);
  });

  it('gives commands the allow-listed environment only', async () => {
    process.env.AWS_SECRET_ACCESS_KEY_FOR_TEST = 'x';
    try {
      const report = await run({ nodes: [{ id: 'env', type: 'shell', params: { command: 'env | cut -d= -f1 | sort', env: { MINE: 'yes' } } }] });
      const names = String((report.result as { stdout: string }).stdout).split('\n');
      expect(names).toContain('MINE');
      expect(names).toContain('PATH');
      expect(names.filter((n) => /^(AWS_|ANTHROPIC_|FLOWMEND_)/.test(n))).toEqual([]);
    } finally {
      delete process.env.AWS_SECRET_ACCESS_KEY_FOR_TEST;
    }
  });
});

describe('bounded runs', () => {
  it('stops a cycle with no exit at the node visit limit with a clear, non-fixable error', async () => {
    const report = await run(
      {
        nodes: [
          { id: 'a', type: 'transform', params: { expression: '1' } },
          { id: 'b', type: 'transform', params: { expression: '2' } },
        ],
        edges: [
          { from: 'a', to: 'b' },
          { from: 'b', to: 'a' },
        ],
      },
      {},
      { limits: { ...DEFAULT_LIMITS, maxNodeVisits: 7 } },
    );
    expect(report.status).toBe('failed');
    expect(report.steps).toHaveLength(7);
    expect(report.errors).toEqual([
      expect.objectContaining({ code: 'NODE_VISIT_LIMIT', fixable: false, message: expect.stringContaining('FLOWMEND_MAX_NODE_VISITS=7') }),
    ]);
  });
});

describe('nothing stuck', () => {
  it('records an unexpected error in a step as the run failing, so status tells the truth', async () => {
    class BrokenStore extends MemoryRunStore {
      override async putRun(run: RunItem, condition: RunWriteCondition): Promise<void> {
        if (run.status === 'succeeded') throw new Error('the disk is on fire');
        return super.putRun(run, condition);
      }
    }
    const store = new BrokenStore();
    const report = await run(
      {
        nodes: [
          { id: 'a', type: 'transform', params: { expression: '1' } },
          { id: 'b', type: 'transform', params: { expression: '2' } },
        ],
        edges: [{ from: 'a', to: 'b' }],
      },
      {},
      { store },
    ).catch((error: unknown) => error);
    const runs = await store.listRuns({ limit: 1 });
    expect(runs[0]?.status).toBe('failed');
    expect(runs[0]?.lastError).toMatchObject({ code: 'INTERNAL_ERROR', fixable: false, message: expect.stringContaining('the disk is on fire') });
    if (!(report instanceof Error)) expect((report as RunReport).status).toBe('failed');
  });

  it('prints one JSON object in JSON mode for bad usage, a broken state dir and a resume of a succeeded run', async () => {
    const badFlag = await sandbox.json(['run', '--no-such-flag']);
    expect(badFlag).toMatchObject({ code: 2, json: { success: false, status: 'invalid' } });

    const notADir = join(sandbox.dir, 'plain-file');
    writeFileSync(notADir, 'not a state dir');
    const { runCli } = await import('../../functions/hosts/cli/commands.ts');
    let stdout = '';
    const code = await runCli(['runs', '--state-dir', notADir, '--output-format', 'json'], { stdout: (t) => (stdout += t), stderr: () => {}, env: {} });
    expect(code).not.toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ success: false });
    expect(stdout).not.toMatch(/\n\s+at /);

    const wf = writeWorkflow(sandbox.dir, 'ok', { nodes: [{ id: 'a', type: 'shell', params: { command: 'echo done' } }] });
    const first = await sandbox.json<{ run_id: string }>(['run', wf]);
    expect(first.code).toBe(0);
    const again = await sandbox.json(['resume', first.json.run_id]);
    expect(again).toMatchObject({ code: 0, json: { success: true, status: 'succeeded', message: expect.stringContaining('already succeeded') } });
    expect(existsSync(sandbox.stateDir)).toBe(true);
  });
});
