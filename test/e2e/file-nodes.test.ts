import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BlobOffloadRunStore } from '../../functions/adapters/blob-offload-run-store.ts';
import { FileBlobStore } from '../../functions/adapters/file-blob-store.ts';
import { SqliteRunStore } from '../../functions/adapters/sqlite-run-store.ts';
import { type WorkflowInput, WorkflowSchema } from '../../functions/core/ir.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { validateWorkflow } from '../../functions/core/validate.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { builtinCatalog } from '../../functions/nodes/catalog.ts';
import { type CliResult, makeTempDir, spawnCrashDriver, writeWorkflow } from '../support/cli-process.ts';

const root = makeTempDir('files');
const outside = join(root, 'outside');
mkdirSync(outside);
writeFileSync(join(outside, 'secret.txt'), 'top secret\n');
afterAll(() => rmSync(root, { recursive: true, force: true }));

let cases = 0;
const workspace = (): string => {
  const dir = join(root, `ws-${++cases}`);
  mkdirSync(dir);
  return dir;
};

const start = (ws: string, workflow: WorkflowInput, host = new LocalHost({ store: new MemoryRunStore() })) =>
  host.start({ workflow: WorkflowSchema.parse(workflow), workflowName: 'files', params: {}, repairEnabled: false, maxRepairs: 0, workspace: ws });

describe('file nodes through the local host', () => {
  it('write, read, copy, move and delete with relative paths under the workspace', async () => {
    const ws = workspace();
    const report = await start(ws, {
      nodes: [
        { id: 'w', type: 'write-file', params: { file_path: 'notes/a.txt', content: 'hello\n' } },
        { id: 'more', type: 'write-file', params: { file_path: 'notes/a.txt', content: 'world\n', append: true } },
        { id: 'cp', type: 'copy-file', params: { source_path: 'notes/a.txt', dest_path: 'b.txt' } },
        { id: 'mv', type: 'move-file', params: { source_path: 'b.txt', dest_path: 'archive/c.txt' } },
        { id: 'r', type: 'read-file', params: { file_path: 'archive/c.txt' } },
        { id: 'rm', type: 'delete-file', params: { file_path: 'notes/a.txt' } },
      ],
      edges: [
        { from: 'w', to: 'more' },
        { from: 'more', to: 'cp' },
        { from: 'cp', to: 'mv' },
        { from: 'mv', to: 'r' },
        { from: 'r', to: 'rm' },
      ],
      outputs: { text: { source: '${r.content}' }, moved: { source: '${mv.moved}' } },
    });
    expect(report.status).toBe('succeeded');
    expect(report.result).toEqual({ text: 'hello\nworld\n', moved: true });
    expect(readFileSync(join(ws, 'archive/c.txt'), 'utf8')).toBe('hello\nworld\n');
    expect(existsSync(join(ws, 'b.txt'))).toBe(false);
    expect(existsSync(join(ws, 'notes/a.txt'))).toBe(false);
  });

  it.each([
    ['a .. path', '../outside/secret.txt'],
    ['an absolute path outside', join(outside, 'secret.txt')],
    ['a symlink leading out', 'link/secret.txt'],
  ])('refuses %s for reading and writing', async (_what, path) => {
    const ws = workspace();
    symlinkSync(outside, join(ws, 'link'));
    for (const node of [
      { id: 'r', type: 'read-file', params: { file_path: path } },
      { id: 'w', type: 'write-file', params: { file_path: path, content: 'overwritten' } },
    ]) {
      const report = await start(ws, { nodes: [node] });
      expect(report.status).toBe('failed');
      expect(report.errors[0]).toMatchObject({ code: 'PATH_OUTSIDE_WORKSPACE', message: expect.stringContaining('outside the workspace') });
    }
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('top secret\n');
  });

  it('reads a 1 MB file: the output goes to a blob and comes back whole', async () => {
    const ws = workspace();
    writeFileSync(join(ws, 'big.txt'), 'x'.repeat(1_000_000));
    const blobs = new FileBlobStore(join(ws, '.state'));
    const host = new LocalHost({ store: new BlobOffloadRunStore(new MemoryRunStore(), blobs), blobs });
    const report = await start(
      ws,
      {
        nodes: [
          { id: 'r', type: 'read-file', params: { file_path: 'big.txt' } },
          { id: 'n', type: 'transform', params: { expression: '$length($)', input: '${r.content}' } },
        ],
        edges: [{ from: 'r', to: 'n' }],
        outputs: { length: { source: '${n.result}' } },
      },
      host,
    );
    expect(report.status).toBe('succeeded');
    expect(report.result).toEqual({ length: 1_000_000 });
  });

  it('is refused by validation on a host without file nodes (AWS), saying what to use', () => {
    const issues = validateWorkflow(WorkflowSchema.parse({ nodes: [{ id: 'r', type: 'read-file', params: { file_path: 'a' } }] }), builtinCatalog);
    expect(issues).toContainEqual(expect.objectContaining({ code: 'UNSUPPORTED_NODE_TYPE', message: expect.stringContaining('local host only') }));
  });
});

describe('file nodes after a crash', () => {
  const stateDir = join(root, 'state');

  it('a resume replays a recorded append instead of appending twice', async () => {
    const ws = workspace();
    const workflow = writeWorkflow(ws, 'wf', {
      nodes: [
        { id: 'w', type: 'write-file', params: { file_path: 'log.txt', content: 'line\n', append: true } },
        { id: 'r', type: 'read-file', params: { file_path: 'log.txt' } },
      ],
      edges: [{ from: 'w', to: 'r' }],
      outputs: { log: { source: '${r.content}' } },
    });
    const driver = spawnCrashDriver({ stateDir, workflowPath: workflow, runId: 'files-crash-1', crashAt: 'step:w:1', workspace: ws });
    const killed: CliResult = await driver.done;
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    expect(readFileSync(join(ws, 'log.txt'), 'utf8')).toBe('line\n');
    const store = SqliteRunStore.open(stateDir);
    try {
      const report = await new LocalHost({ store }).resume('files-crash-1');
      expect(report, JSON.stringify(report.errors)).toMatchObject({ success: true, result: { log: 'line\n' } });
      expect(report.steps.find((s) => s.node_id === 'w' && s.cached)).toBeDefined();
    } finally {
      store.close();
    }
    expect(readFileSync(join(ws, 'log.txt'), 'utf8')).toBe('line\n');
  });
});
