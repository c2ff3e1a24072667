import { mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WorkflowSchema } from '../../functions/core/ir.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { makeTempDir } from '../support/cli-process.ts';

const dir = realpathSync(makeTempDir('shell-workspace'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('shell nodes run in the run’s recorded workspace', () => {
  it('runs each command there (and a relative cwd under it), in the first process and in the one that resumes', async () => {
    const workspace = join(dir, 'ws');
    mkdirSync(join(workspace, 'sub'), { recursive: true });
    const store = new MemoryRunStore();
    const workflow = WorkflowSchema.parse({
      nodes: [
        { id: 'here', type: 'shell', params: { command: 'pwd' } },
        { id: 'gate', type: 'shell', params: { command: 'test -f go' } },
        { id: 'there', type: 'shell', params: { command: 'pwd', cwd: 'sub' } },
      ],
      edges: [
        { from: 'here', to: 'gate' },
        { from: 'gate', to: 'there' },
      ],
      outputs: { here: { source: '${here.stdout}' }, there: { source: '${there.stdout}' } },
    });
    // This process's cwd is the repository, not the workspace.
    expect(process.cwd()).not.toBe(workspace);
    const first = await new LocalHost({ store }).start({ workflow, workflowName: 'pwd', params: {}, repairEnabled: false, maxRepairs: 0, workspace });
    expect(first.status).toBe('failed');
    writeFileSync(join(workspace, 'go'), '');
    const resumed = await new LocalHost({ store }).resume(first.run_id);
    expect(resumed.result).toEqual({ here: workspace, there: join(workspace, 'sub') });
  });
});
