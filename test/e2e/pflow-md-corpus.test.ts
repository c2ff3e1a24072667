import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { makeCatalog } from '../../functions/core/node-type.ts';
import { prepareRun } from '../../functions/core/prepare-run.ts';
import { validateWorkflow } from '../../functions/core/validate.ts';
import { loadWorkflowFile } from '../../functions/hosts/cli/workflow-file.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { fileRunners } from '../../functions/nodes/catalog.ts';
import { codeRunner } from '../../functions/nodes/code.ts';
import { localSpecCatalog } from '../../functions/nodes/local-specs.ts';
import { shellRunner } from '../../functions/nodes/shell.ts';
import { transformRunner } from '../../functions/nodes/transform.ts';
import { engineNodeSpecs } from '../../functions/nodes/workflow.ts';

/** pflow's own `.pflow.md` files (its data: read from ../shared, never copied into this repository). */
const EXAMPLES = join(import.meta.dirname, '..', '..', '..', 'shared', 'pflow-examples', 'md');
const present = existsSync(EXAMPLES);

let dir: string;
/** The examples laid out at their paths in pflow's repository (the copies name them `a__b__c.pflow.md`), so relative refs resolve. */
const files: string[] = [];

beforeAll(() => {
  if (!present) return;
  dir = mkdtempSync(join(tmpdir(), 'flowmend-pflow-md-'));
  for (const name of readdirSync(EXAMPLES).filter((f) => f.endsWith('.pflow.md'))) {
    const path = name.replaceAll('__', '/');
    mkdirSync(join(dir, dirname(path)), { recursive: true });
    copyFileSync(join(EXAMPLES, name), join(dir, path));
    files.push(path);
  }
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const validate = async (path: string) => {
  const loaded = await loadWorkflowFile(join(dir, path));
  if (!loaded.ok) return { loaded, issues: loaded.issues };
  return { loaded, issues: loaded.locate(validateWorkflow(loaded.workflow, localSpecCatalog)) };
};

const runners = [shellRunner, transformRunner, codeRunner, ...fileRunners];

/** Runs one example in a fresh workspace holding `files`; `inspect` reads the workspace before it is removed. */
const run = async (path: string, params: Record<string, unknown> = {}, files: Record<string, string> = {}, inspect?: (workspace: string) => void) => {
  const loaded = await loadWorkflowFile(join(dir, path));
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.issues));
  const prepared = prepareRun(
    { workflow: loaded.workflow, workflowName: loaded.name, params, repairEnabled: false, maxRepairs: 0 },
    makeCatalog([...runners, ...engineNodeSpecs]),
  );
  if (!prepared.ok) throw new Error(prepared.message);
  const workspace = mkdtempSync(join(tmpdir(), 'flowmend-pflow-ws-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(workspace, name)), { recursive: true });
    writeFileSync(join(workspace, name), text);
  }
  try {
    const report = await new LocalHost({ store: new MemoryRunStore(), runners, retryIntervalMs: 0 }).start({ ...prepared.spec, workspace });
    inspect?.(workspace);
    return report;
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
};

describe.skipIf(!present)(`pflow's own .pflow.md examples (${present ? EXAMPLES : 'skipped: ../shared/pflow-examples/md is not beside this checkout'})`, () => {
  it('has the 25 files SOURCE.txt lists', () => {
    expect(files).toHaveLength(25);
  });

  it('validates every file pflow accepts', async () => {
    const results: Record<string, string[]> = {};
    for (const path of files) {
      if (path.startsWith('examples/invalid/')) continue;
      const { issues } = await validate(path);
      results[path] = issues.filter((i) => i.severity === 'error').map((i) => `${i.path}: ${i.message}`);
    }
    expect(Object.values(results).flat()).toEqual([]);
    expect(Object.keys(results).length).toBe(files.length - 1);
  });

  it('refuses the negative case (a step without a type) at its line, saying what the format expects', async () => {
    const { issues } = await validate('examples/invalid/missing-type.pflow.md');
    expect(issues).toEqual([
      expect.objectContaining({ line: 7, column: 1, message: "step 'fetch' has no type", hint: expect.stringContaining('- type: shell') }),
    ]);
  });

  it('runs the batch over a workflow node, each item naming its child by a template: a child run per item, in item order', async () => {
    const fan = await run('tests/fixtures/graph/multi-output-batch/parent.pflow.md');
    expect(fan).toMatchObject({ status: 'succeeded', result: { result: { combined: true } } });
    expect(fan.steps[0]?.batch).toMatchObject({ count: 5, success_count: 5, error_count: 0 });
    const children = (fan as { children?: { index?: number; result: unknown }[] }).children ?? [];
    expect(children.map((c) => [c.index, c.result])).toEqual([0, 1, 2, 3, 4].map((i) => [i, { summary: 'ok', score: 1 }]));
  });

  it("runs the self-contained ones with pflow's results", async () => {
    expect((await run('examples/core/minimal.pflow.md')).status).toBe('succeeded');
    expect(await run('examples/core/stdout-result.pflow.md', { greeting: 'hi alice' })).toMatchObject({
      status: 'succeeded',
      result: { message: 'hi alice', length: '8' },
    });
    expect(await run('examples/core/stdin-echo.pflow.md', { data: 'piped' })).toMatchObject({ status: 'succeeded', result: { result: 'Received: piped' } });
    expect(await run('examples/nested/document-processor.pflow.md', { title: 'a title', body: 'the body' })).toMatchObject({
      status: 'succeeded',
      result: { stdout: 'Title: A TITLE\nBody: THE BODY' },
    });
    expect(await run('examples/error-handling/loop-recovery.pflow.md')).toMatchObject({ status: 'succeeded', result: { result: 'succeeded-on-retry' } });
    // Absolute paths outside the run's workspace are refused by flowmend's file nodes, a failure no retry fixes:
    // both take their on-error route at once, as pflow's does for the directory (pflow retries the missing file first).
    for (const path of ['examples/error-handling/non-retriable-file-error.pflow.md', 'examples/error-handling/retry-with-backoff.pflow.md']) {
      const report = await run(path);
      expect(report, path).toMatchObject({ status: 'succeeded', result: { stdout: expect.stringContaining('example complete') } });
      expect(report.steps.map((s) => s.node_id)).toEqual([
        `prepare-${path.includes('backoff') ? 'path' : 'directory'}`,
        expect.any(String),
        expect.any(String),
        'done',
      ]);
    }
    // Python routing: the code node sets next to process-small (3 items).
    expect(await run('examples/core/conditional-branching.pflow.md')).toMatchObject({ status: 'succeeded', result: { stdout: 'Processing complete' } });
    // A loop over a child workflow whose code node judges a round: carry feeds each round's survivors to the next.
    const tournament = await run('examples/core/stateful-loop-tournament.pflow.md');
    expect(tournament).toMatchObject({ status: 'succeeded', result: { stdout: 'Winner: ada' } });
    expect(tournament.steps.filter((s) => s.node_id === 'run-rounds')).toHaveLength(2);
    expect(await run('tests/fixtures/graph/multi-output-batch/review-item.pflow.md')).toMatchObject({
      status: 'succeeded',
      result: { summary: 'ok', score: 1 },
    });
    // pflow's shared store: the writer with no content writes what the reader read (its prose: "flows ... via the shared store").
    const pipeline = await run('examples/core/simple-pipeline.pflow.md', {}, { 'input.txt': 'pipeline data\n' }, (ws) => {
      expect(readFileSync(join(ws, 'output.txt'), 'utf8')).toBe('pipeline data\n');
      expect(readFileSync(join(ws, 'backup.txt'), 'utf8')).toBe('pipeline data\n');
    });
    expect(pipeline.status).toBe('succeeded');
    // error-handling: with its input, the source is saved (then, by document order, its save-result falls into
    // log-error: a validation warning, and pflow's edges run the same way); without, the error routes skip it.
    const saved = await run('examples/core/error-handling.pflow.md', {}, { 'data/input.txt': 'source data' }, (ws) => {
      expect(readFileSync(join(ws, 'output/result.txt'), 'utf8')).toBe('source data');
    });
    expect(saved.steps.map((s) => s.node_id)).toEqual(['read-source', 'process-file', 'save-result', 'log-error', 'create-fallback']);
    const fallback = await run('examples/core/error-handling.pflow.md', {}, {}, (ws) => {
      expect(readFileSync(join(ws, 'output/fallback.txt'), 'utf8')).toBe('Processing failed - using default content');
    });
    expect(fallback.steps.map((s) => s.node_id)).toEqual(['read-source', 'log-error', 'create-fallback']);
    // Its own prose: "Should error: never_run is absent, fails is failed" (pflow itself skips the output silently).
    expect(await run('examples/error-handling/coalesce-mixed-absent-failed.pflow.md')).toMatchObject({
      status: 'failed',
      errors: [{ category: 'template', message: expect.stringContaining('no operand is present') }],
    });
  });
});
