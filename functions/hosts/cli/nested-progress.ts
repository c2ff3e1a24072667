import type { StoreWrite } from '../../adapters/observed-run-store.ts';
import { makeProgressPrinter } from './progress.ts';

const runIdOf = (event: StoreWrite): string | undefined => {
  switch (event.kind) {
    case 'run':
      return event.run.runId;
    case 'step':
      return event.step.runId;
    case 'steps':
      return event.steps[0]?.runId;
    case 'events':
      return event.events[0]?.runId;
  }
};

/**
 * Progress of a run and of the child runs its workflow nodes start (one execution drives them all):
 * one line printer per run, each child's lines indented two spaces per nesting level, as pflow indents
 * nested workflows. A workflow node's line is ended while its child prints and written again after.
 */
export const makeNestedProgressPrinter = (write: (text: string) => void, nodeCount: () => number) => {
  const runs = new Map<string, { print: (event: StoreWrite) => void; partial: string; depth: number; header: string }>();
  let active: string | undefined;
  let lineOpen = false;

  const output = (runId: string) => (text: string) => {
    const run = runs.get(runId);
    if (!run) return;
    if (active !== runId) {
      if (lineOpen) write('\n');
      lineOpen = false;
      active = runId;
      if (run.partial !== '') {
        write(run.partial);
        lineOpen = true;
      }
    }
    const indent = '  '.repeat(run.depth);
    for (const piece of text.split(/(?<=\n)/)) {
      if (piece === '') continue;
      const shown = lineOpen ? piece : `${indent}${piece}`;
      write(shown);
      lineOpen = !shown.endsWith('\n');
      run.partial = lineOpen ? `${run.partial}${shown}` : '';
    }
  };

  const printerOf = (runId: string) => {
    let run = runs.get(runId);
    if (!run) {
      const entry = { print: (_event: StoreWrite) => {}, partial: '', depth: 0, header: '' };
      runs.set(runId, entry);
      entry.print = makeProgressPrinter(output(runId), nodeCount, runs.size === 1 ? undefined : () => entry.header);
      run = entry;
    }
    return run;
  };

  return (event: StoreWrite): void => {
    const runId = runIdOf(event);
    if (runId === undefined) return;
    const run = printerOf(runId);
    if (event.kind === 'run' && event.run.parent) {
      run.depth = event.run.parent.depth;
      run.header = `Child run ${runId} of node '${event.run.parent.nodeId}':\n`;
    }
    run.print(event);
  };
};
