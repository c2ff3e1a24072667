import type { StoreWrite } from '../../adapters/observed-run-store.ts';
import type { NodeRecord } from '../../core/index.ts';
import { BatchProgressThrottle, batchProgressLine } from './batch-progress.ts';
import { retryLine } from './progress-lines.ts';

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)}s`;
/** One line for a progress message: its first line, joined with the next when it only introduces it. */
const firstLine = (text: string): string => {
  const [first = '', second] = text.split('\n').filter((line) => line.trim() !== '');
  return first.trimEnd().endsWith(':') && second ? `${first.trim()} ${second.trim()}` : first;
};

/**
 * Progress lines like pflow's (DESIGN section 8), from the store writes the engine makes:
 * `  fetch... ✓ 1.8s`, `  fetch... ↻ cached`, `  call... ⚠ API error: ...`, `  boom... ✗ <message>`.
 * A step's events are written before its run item, which carries the records of the nodes that just
 * finished; so event lines wait for the next run item and follow those nodes' lines.
 */
export const makeProgressPrinter = (write: (text: string) => void, nodeCount: () => number, header?: () => string) => {
  let open: { nodeId: string; seq: number } | undefined;
  let startedSeq = 0;
  /** Records at or below it existed before this process began; above it, those already printed. */
  let baseline = 0;
  const printed = new Set<number>();
  const queued: string[] = [];
  let seen = false;
  const close = (text: string) => {
    write(`${text}\n`);
    open = undefined;
  };
  const start = (nodeId: string, seq: number) => {
    if (open) close('');
    write(`  ${nodeId}...`);
    open = { nodeId, seq };
  };
  const finish = (records: readonly NodeRecord[]) => {
    for (const s of [...records].sort((a, b) => a.seq - b.seq)) {
      // Items show as the batch's `n/total` lines; the batch's own line comes with its final record.
      if (s.seq <= baseline || printed.has(s.seq) || s.item || s.status === 'running') continue;
      printed.add(s.seq);
      if (open?.seq !== s.seq) start(s.nodeId, s.seq);
      const tags = [s.repaired ? '[repaired]' : '', s.interrupted && s.status !== 'interrupted' ? '[ran again after interruption]' : '']
        .filter(Boolean)
        .join(' ');
      const suffix = tags ? ` ${tags}` : '';
      if (s.status === 'completed') close(` ✓ ${seconds(s.durationMs ?? 0)}${suffix}`);
      else if (s.status === 'warning') close(` ⚠ ${firstLine(s.error?.message ?? 'warning')}${suffix}`);
      else close(` ✗ ${firstLine(s.error?.message ?? s.status)}${suffix}`);
    }
  };
  const line = (text: string) => queued.push(text);
  const batchLines = new BatchProgressThrottle();
  return (event: StoreWrite): void => {
    switch (event.kind) {
      case 'run': {
        if (!seen) {
          // The first run item this process writes (a new run, or a resume's claim): what it holds is old.
          seen = true;
          baseline = startedSeq = event.run.seq;
        }
        finish(event.run.pendingRecords);
        if (queued.length > 0 && open) close('');
        for (const text of queued.splice(0)) write(text);
        const current = event.run.current;
        if (current && current.seq > startedSeq) {
          startedSeq = current.seq;
          start(current.nodeId, current.seq);
        }
        // A wait node in flight when the run pauses: its line says so (the report says until when).
        if (event.run.status === 'waiting' && open) close(' ⏸ waiting');
        return;
      }
      case 'step':
        finish([event.step]);
        return;
      case 'steps':
        finish(event.steps);
        return;
      case 'events':
        for (const e of event.events) {
          switch (e.type) {
            case 'run_started':
              line(header ? header() : `Executing workflow (${nodeCount()} node${nodeCount() === 1 ? '' : 's'}):\n`);
              break;
            case 'run_resumed':
              line(`Resuming run ${e.runId} (${e.message ?? ''}):\n`);
              break;
            case 'node_cached':
              for (const n of (e.data?.nodes ?? []) as { id: string }[]) {
                line(`  ${n.id}... ↻ cached\n`);
              }
              break;
            case 'batch_progress':
              if (batchLines.due(e.nodeId, e.data)) line(`${batchProgressLine(e.nodeId, e.data)}\n`);
              break;
            case 'node_interrupted':
              line(`  ${e.nodeId}... was interrupted; running it again\n`);
              break;
            case 'node_retrying':
              line(`  ${e.nodeId}... ↺ ${retryLine(e.data)}\n`);
              break;
            case 'repair_started':
              line(
                `Repairing workflow (attempt ${String(e.data?.attempt)}/${String(e.data?.max)}): ${e.nodeId ? `node '${e.nodeId}'` : firstLine(e.message ?? '')}\n`,
              );
              break;
            case 'repair_applied':
              line(`  repaired by ${String(e.data?.source)}: ${e.message ?? ''}\n`);
              break;
            case 'repair_failed':
              line(`  repair ${e.data?.outcome ?? 'failed'}: ${firstLine(e.message ?? '')}\n`);
              break;
            case 'run_woken':
              line(`Continuing after the wait (${e.data.outcome}):\n`);
              break;
            default:
              break;
          }
        }
        return;
    }
  };
};
