// How many of a set of intervals (a run's or a node's start to its end) were open at once: what a concurrency limit bounds.

/** The most intervals open at any instant (an end at the same instant as a start closes first). */
export const maxOverlap = (intervals: readonly { start: number; end: number }[]): number => {
  const edges = intervals.flatMap((i) => [
    { at: i.start, d: 1 },
    { at: i.end, d: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.d - b.d);
  let open = 0;
  let most = 0;
  for (const e of edges) {
    open += e.d;
    most = Math.max(most, open);
  }
  return most;
};
