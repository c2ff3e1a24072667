import type { RunStatus, RunStore } from '../../core/index.ts';
import { type ProgressEvent, readProgress } from '../../core/index.ts';
import { progressLines } from './progress-lines.ts';

/** How often `flowmend logs --follow` re-reads the local store. */
const POLL_MS = 200;
/** About a day of following before it gives up on a run that never ends. */
const MAX_POLLS = 432_000;

/**
 * `flowmend logs` on the local store: the run's progress so far and, with `follow`, as it goes until the
 * run stops running. Undefined when there is no such run.
 */
export const followLocal = async (
  store: RunStore,
  runId: string,
  follow: boolean,
  print: ((text: string) => void) | undefined,
): Promise<{ status: RunStatus; events: ProgressEvent[] } | undefined> => {
  const events: ProgressEvent[] = [];
  let after: { eventKey: string; seq: number } | undefined;
  for (let poll = 0; poll < MAX_POLLS; poll += 1) {
    const page = await readProgress(store, runId, after, 500);
    if (!page) return undefined;
    for (const event of page.events) {
      if (print) for (const line of progressLines(event)) print(`${line}\n`);
      else events.push(event);
    }
    const [eventKey = '', seq = '0'] = page.cursor.split('.');
    after = { eventKey, seq: Number(seq) };
    if (page.more) continue;
    if (!follow || page.status !== 'running') return { status: page.status, events };
    await new Promise((done) => setTimeout(done, POLL_MS));
  }
  return { status: 'running', events };
};
