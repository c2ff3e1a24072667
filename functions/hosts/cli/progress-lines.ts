import type { ProgressEvent } from '../../core/index.ts';
import { batchProgressLine } from './batch-progress.ts';

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)}s`;
const firstLine = (text: string): string => {
  const [first = '', second] = text.split('\n').filter((line) => line.trim() !== '');
  return first.trimEnd().endsWith(':') && second ? `${first.trim()} ${second.trim()}` : first;
};

/** `try 2/3 in 4s` for a node's `retry` (its node_retrying event). */
export const retryLine = (data: Record<string, unknown>): string =>
  `try ${Number(data.attempt) + 1}/${String(data.max)}${Number(data.waitS) > 0 ? ` in ${String(data.waitS)}s` : ''}`;

/**
 * The progress lines of `flowmend logs` and of a remote run, from the progress feed: the same lines a
 * local run prints from its store writes (`  fetch... ✓ 1.8s`, `  fetch... ↻ cached`, ...).
 */
export const progressLines = (event: ProgressEvent): string[] => {
  const tags = [event.repaired ? '[repaired]' : '', event.interrupted && event.type !== 'node_interrupted' ? '[ran again after interruption]' : '']
    .filter(Boolean)
    .join(' ');
  const suffix = tags ? ` ${tags}` : '';
  switch (event.type) {
    case 'run_started': {
      const count = Number.parseInt(event.message ?? '', 10);
      return [`Executing workflow (${count} node${count === 1 ? '' : 's'}):`];
    }
    case 'run_resumed':
      return [`Resuming run (${event.message ?? ''}):`];
    case 'node_completed':
      return [`  ${event.node_id}... ✓ ${seconds(event.duration_ms ?? 0)}${suffix}`];
    case 'node_warning':
      return [`  ${event.node_id}... ⚠ ${firstLine(event.message ?? 'warning')}${suffix}`];
    case 'node_failed':
      return [`  ${event.node_id}... ✗ ${firstLine(event.message ?? 'failed')}${suffix}`];
    case 'node_interrupted':
      return [`  ${event.node_id}... ✗ interrupted`];
    case 'node_retrying':
      return [`  ${event.node_id}... ↺ ${retryLine(event.data ?? {})}`];
    case 'node_cached':
      return ((event.data?.nodes ?? []) as { id: string }[]).map((n) => `  ${n.id}... ↻ cached`);
    case 'repair_started':
      return [
        `Repairing workflow (attempt ${String(event.data?.attempt)}/${String(event.data?.max)}): ${event.node_id ? `node '${event.node_id}'` : firstLine(event.message ?? '')}`,
      ];
    case 'repair_applied':
      return [`  repaired by ${String(event.data?.source)}: ${event.message ?? ''}`];
    case 'repair_failed':
      return [`  repair ${String(event.data?.outcome ?? 'failed')}: ${firstLine(event.message ?? '')}`];
    case 'run_cancelled':
      return [`Run cancelled: ${event.message ?? ''}`];
    case 'run_interrupted':
      return [`Run interrupted (resumable): ${event.message ?? ''}`];
    case 'batch_progress':
      return [batchProgressLine(event.node_id ?? '', event.data ?? {})];
    case 'run_waiting':
      return [`  ⏸ ${event.message ?? 'waiting'}`];
    case 'wait_answered':
      return [`  ${event.node_id ? `${event.node_id}... ` : ''}answered: ${firstLine(event.message ?? '')}`];
    case 'run_woken':
      return [`Continuing (${String(event.data?.outcome ?? 'woken')}):`];
    case 'node_started':
    case 'run_succeeded':
    case 'run_failed':
    case 'execution_continued':
      return [];
  }
};
