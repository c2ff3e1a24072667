// Child process for crash.test.ts: starts a run on a state dir through the local host and SIGKILLs itself right
// after one chosen store write, so the test can crash a run at an exact point and resume it from another process.
// Usage: node --import tsx crash-driver.ts <stateDir> <workflow.json> <runId> <crashAt> [workspace]
// crashAt: `step:<node>:<visit>` (after that visit's record is written, before the run item moves on)
//        | `run:<node>:<visit>` (after the run item says that visit is in flight, before RunNode)
//        | `run:created` (after the run item is first written, before the first Advance)
//        | `run:succeeded` (after the run item says the run succeeded)
//        | `mid:<node>:<visit>` (in the middle of that visit's work: once the run item says it is in flight
//          and the file `<node>.started` appears in $CRASH_MARKER_DIR, which the node's command, or the
//          server it calls, writes when its work has begun)
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StoreWrite } from '../../functions/adapters/observed-run-store.ts';
import { SqliteRunStore } from '../../functions/adapters/sqlite-run-store.ts';
import { WorkflowSchema } from '../../functions/core/ir.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';

const [stateDir, workflowPath, runId, crashAt, workspace] = process.argv.slice(2) as [string, string, string, string, string | undefined];
const [kind, nodeId, visit] = crashAt.split(':');

const isTarget = (step: { nodeId: string; visit: number }) => step.nodeId === nodeId && String(step.visit) === visit;

const matches = (write: StoreWrite): boolean => {
  // A record is durable once a write holds it: its own item, a batch of them, or the run item carrying it.
  if (kind === 'step' && write.kind === 'step') return isTarget(write.step);
  if (kind === 'step' && write.kind === 'steps') return write.steps.some(isTarget);
  if (kind === 'step' && write.kind === 'run') return write.run.pendingRecords.some(isTarget);
  if (kind === 'run' && write.kind === 'run') {
    if (nodeId === 'created') return write.run.seq === 0 && write.run.current === undefined;
    if (nodeId === 'succeeded') return write.run.status === 'succeeded';
    return write.run.current?.nodeId === nodeId && String(write.run.current?.visit) === visit;
  }
  return false;
};

/** Polls for the marker the node's work leaves, then dies (the work still going on in its process or server). */
const killOnceStarted = (): void => {
  const marker = join(process.env.CRASH_MARKER_DIR ?? '.', `${nodeId}.started`);
  const poll = setInterval(() => {
    if (existsSync(marker)) process.kill(process.pid, 'SIGKILL');
  }, 5);
  poll.unref();
};

const store = SqliteRunStore.open(stateDir);
let watching = false;
const host = new LocalHost({
  store,
  onWrite: (write) => {
    if (kind === 'mid') {
      if (!watching && write.kind === 'run' && write.run.current?.nodeId === nodeId && String(write.run.current?.visit) === visit) {
        watching = true;
        killOnceStarted();
      }
      return;
    }
    if (matches(write)) process.kill(process.pid, 'SIGKILL');
  },
});
const workflow = WorkflowSchema.parse(JSON.parse(readFileSync(workflowPath, 'utf8')));
const report = await host.start({
  workflow,
  workflowName: 'crash',
  params: {},
  repairEnabled: false,
  maxRepairs: 0,
  runId,
  ...(workspace ? { workspace } : {}),
});
process.stdout.write(`${JSON.stringify({ crashed: false, status: report.status })}\n`);
store.close();
process.exitCode = 3;
