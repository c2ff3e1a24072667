import type { RunItem } from './run-model.ts';

// A run item's path maps (`latest`, `visits`) hold one entry for each node the run has visited, and a step
// changes one entry of each. Written whole with the item, they made each step's write grow with the run
// (a chain of 1,000 nodes: ~20 KB of JSON a step, a third of its CPU). A store that keeps them apart (the
// SQLite store: a row a node) asks what changed since its last write of the object and writes only that.
// So every change of an entry goes through the functions below.

/**
 * What changed in one run item object since a store last took its changes, for the write named `token`.
 * `changed` undefined: unknown, write it whole. `emptied`: the maps as they were when a walk emptied them
 * (`clearPath`), which the rows are but for the entries changed before it (`pending`): the next write is
 * of those and of the entries that differ from them, not of every entry.
 */
interface PathTracker {
  token: string | undefined;
  changed: Set<string> | undefined;
  emptied?: { latest: Record<string, number>; visits: Record<string, number>; pending: Set<string> } | undefined;
}

const trackers = new WeakMap<RunItem, PathTracker>();

/** The tracker of `run`, made (knowing nothing yet: the next write is whole) on first use. */
const trackerOf = (run: RunItem): PathTracker => {
  let tracker = trackers.get(run);
  if (!tracker) {
    tracker = { token: undefined, changed: undefined };
    trackers.set(run, tracker);
  }
  return tracker;
};

/** Notes a changed entry, for a store that took the object's changes before (none took them: it writes the object whole). */
const noteChange = (run: RunItem, nodeId: string): void => {
  trackers.get(run)?.changed?.add(nodeId);
};

/** Templates read this visit of `nodeId` from now on. */
export const setLatest = (run: RunItem, nodeId: string, seq: number): void => {
  run.latest[nodeId] = seq;
  noteChange(run, nodeId);
};

export const setVisits = (run: RunItem, nodeId: string, visits: number): void => {
  run.visits[nodeId] = visits;
  noteChange(run, nodeId);
};

/**
 * Empties both maps (a walk fills them again, mostly as they were). The next write is of the entries that
 * differ from the maps as they were, and of those changed before (a walk over 1,000 replayed nodes rewrote
 * 1,000 rows where it changed one or two); whole when the changes were not known.
 */
export const clearPath = (run: RunItem): void => {
  const tracker = trackers.get(run);
  // The rows are those of the last write: the maps as they are now, but for the entries changed since. A
  // second walk before a write keeps the first one's maps and entries, which the rows still are.
  if (tracker?.changed !== undefined) {
    tracker.emptied ??= { latest: run.latest, visits: run.visits, pending: tracker.changed };
    tracker.changed = new Set();
  }
  run.latest = {};
  run.visits = {};
};

/**
 * For a store about to write `run` as the write named `token` (unique to each write): the entries changed
 * since its last write of this object (after `clearPath`, the entries that differ from the maps it emptied),
 * and that write's token (the base the changes apply to); undefined when the whole maps must be written (the
 * first write of the object, or after a failed write).
 */
export const takePathChanges = (run: RunItem, token: string): { base: string; changed: string[] } | undefined => {
  const tracker = trackerOf(run);
  const { emptied } = tracker;
  let { changed } = tracker;
  if (changed !== undefined && emptied !== undefined) {
    changed = new Set(emptied.pending);
    for (const maps of [emptied, run])
      for (const nodeId of [...Object.keys(maps.latest), ...Object.keys(maps.visits)])
        if (emptied.latest[nodeId] !== run.latest[nodeId] || emptied.visits[nodeId] !== run.visits[nodeId]) changed.add(nodeId);
  }
  const taken = tracker.token !== undefined && changed !== undefined ? { base: tracker.token, changed: [...changed] } : undefined;
  tracker.token = token;
  tracker.changed = new Set();
  tracker.emptied = undefined;
  return taken;
};

/**
 * `run` was just read from the rows the write named `token` left: its next write can carry its changes over
 * them (a store that finds other rows by then writes it whole, as for any write whose base is not there).
 */
export const pathReadAt = (run: RunItem, token: string): void => {
  trackers.set(run, { token, changed: new Set() });
};

/** A write of `run` failed (or may have): its next write is whole. */
export const forgetPathChanges = (run: RunItem): void => {
  const tracker = trackers.get(run);
  if (tracker) {
    tracker.changed = undefined;
    tracker.emptied = undefined;
  }
};

/** `copy` is written in place of `run` (a redacted copy): both share one tracker, so the changes made to `run` are the copy's. */
export const sharePathChanges = (run: RunItem, copy: RunItem): void => {
  trackers.set(copy, trackerOf(run));
};
