import type { RunItem } from './run-model.ts';

// A run item's path maps (`latest`, `visits`) hold one entry for each node the run has visited, and a step
// changes one entry of each. Written whole with the item, they made each step's write grow with the run
// (a chain of 1,000 nodes: ~20 KB of JSON a step, a third of its CPU). A store that keeps them apart (the
// SQLite store: a row a node) asks what changed since its last write of the object and writes only that.
// So every change of an entry goes through the functions below.

/** What changed in one run item object since a store last took its changes, for the write named `token`. `changed` undefined: unknown, write it whole. */
interface PathTracker {
  token: string | undefined;
  changed: Set<string> | undefined;
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

/** Empties both maps (a walk fills them again): the next write is whole. */
export const clearPath = (run: RunItem): void => {
  run.latest = {};
  run.visits = {};
  forgetPathChanges(run);
};

/**
 * For a store about to write `run` as the write named `token` (unique to each write): the entries changed
 * since its last write of this object, and that write's token (the base the changes apply to); undefined
 * when the whole maps must be written (the first write of the object, after `clearPath` or a failed write).
 */
export const takePathChanges = (run: RunItem, token: string): { base: string; changed: string[] } | undefined => {
  const tracker = trackerOf(run);
  const taken = tracker.token !== undefined && tracker.changed !== undefined ? { base: tracker.token, changed: [...tracker.changed] } : undefined;
  tracker.token = token;
  tracker.changed = new Set();
  return taken;
};

/** A write of `run` failed (or may have): its next write is whole. */
export const forgetPathChanges = (run: RunItem): void => {
  const tracker = trackers.get(run);
  if (tracker) tracker.changed = undefined;
};

/** `copy` is written in place of `run` (a redacted copy): both share one tracker, so the changes made to `run` are the copy's. */
export const sharePathChanges = (run: RunItem, copy: RunItem): void => {
  trackers.set(copy, trackerOf(run));
};
