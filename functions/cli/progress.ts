import type { StoreWrite } from '../adapters/observed-run-store.ts';

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)}s`;
/** One line for a progress message: its first line, joined with the next when it only introduces it. */
const firstLine = (text: string): string => {
  const [first = '', second] = text.split('\n').filter((line) => line.trim() !== '');
  return first.trimEnd().endsWith(':') && second ? `${first.trim()} ${second.trim()}` : first;
};

/**
 * Progress lines like pflow's (DESIGN section 8), from the store writes the engine makes:
 * `  fetch... ✓ 1.8s`, `  fetch... ↻ cached`, `  call... ⚠ API error: ...`, `  boom... ✗ <message>`.
 */
export const makeProgressPrinter = (write: (text: string) => void, nodeCount: () => number) => {
  let open: { nodeId: string; seq: number } | undefined;
  let lastSeq = 0;
  const close = (text: string) => {
    write(`${text}\n`);
    open = undefined;
  };
  const start = (nodeId: string, seq: number) => {
    if (open) close('');
    write(`  ${nodeId}...`);
    open = { nodeId, seq };
  };
  return (event: StoreWrite): void => {
    switch (event.kind) {
      case 'run': {
        const current = event.run.current;
        if (current && current.seq > lastSeq) {
          lastSeq = current.seq;
          start(current.nodeId, current.seq);
        }
        return;
      }
      case 'step': {
        const s = event.step;
        if (open?.seq !== s.seq) start(s.nodeId, s.seq);
        const tags = [s.repaired ? '[repaired]' : '', s.interrupted ? '[ran again after interruption]' : ''].filter(Boolean).join(' ');
        const suffix = tags ? ` ${tags}` : '';
        if (s.status === 'completed') close(` ✓ ${seconds(s.durationMs ?? 0)}${suffix}`);
        else if (s.status === 'warning') close(` ⚠ ${firstLine(s.error?.message ?? 'warning')}${suffix}`);
        else close(` ✗ ${firstLine(s.error?.message ?? s.status)}${suffix}`);
        return;
      }
      case 'events':
        for (const e of event.events) {
          switch (e.type) {
            case 'run_started':
              write(`Executing workflow (${nodeCount()} node${nodeCount() === 1 ? '' : 's'}):\n`);
              break;
            case 'run_resumed':
              write(`Resuming run ${e.runId} (${e.message ?? ''}):\n`);
              break;
            case 'node_cached':
              for (const n of (e.data?.nodes ?? []) as { id: string }[]) {
                if (open) close('');
                write(`  ${n.id}... ↻ cached\n`);
              }
              break;
            case 'node_interrupted':
              if (open) close('');
              write(`  ${e.nodeId}... was interrupted; running it again\n`);
              break;
            case 'repair_started':
              if (open) close('');
              write(`Repairing workflow (attempt ${String(e.data?.attempt)}/${String(e.data?.max)}): ${firstLine(e.message ?? '')}\n`);
              break;
            case 'repair_applied':
              write(`  repaired by ${String(e.data?.source)}: ${e.message ?? ''}\n`);
              break;
            case 'repair_failed':
              write(`  repair failed: ${firstLine(e.message ?? '')}\n`);
              break;
            default:
              break;
          }
        }
        return;
    }
  };
};
