import type { NodeRecord } from '../run-model.ts';

/** Items a report lists one by one (timings and errors); the counts cover them all. */
export const REPORTED_ITEMS = 100;

/** A batch step in the JSON report: its counts, and the first items with their timings and errors. */
export interface ReportBatch {
  count: number;
  success_count: number;
  error_count: number;
  replayed_count: number;
  items: { index: number; status: string; duration_ms: number; replayed: boolean; error?: string }[];
  /** Set when the batch has more items than `items` lists. */
  items_omitted?: number;
}

/** Item records grouped by the seq of their batch's record, each group in index order. */
export const itemsByBatch = (records: readonly NodeRecord[]): Map<number, NodeRecord[]> => {
  const groups = new Map<number, NodeRecord[]>();
  for (const r of records) {
    if (!r.item) continue;
    const group = groups.get(r.item.batchSeq) ?? [];
    group.push(r);
    groups.set(r.item.batchSeq, group);
  }
  for (const group of groups.values()) group.sort((a, b) => (a.item?.index ?? 0) - (b.item?.index ?? 0));
  return groups;
};

/** The report's view of one batch, from its item records (those of the attempt the batch record names). */
export const reportBatch = (items: readonly NodeRecord[], count: number): ReportBatch => {
  const ok = items.filter((r) => r.status === 'completed').length;
  return {
    count,
    success_count: ok,
    error_count: items.length - ok,
    replayed_count: items.filter((r) => r.replayed).length,
    items: items.slice(0, REPORTED_ITEMS).map((r) => ({
      index: r.item?.index ?? 0,
      status: r.status,
      duration_ms: Math.round((r.durationMs ?? 0) * 10) / 10,
      replayed: r.replayed ?? false,
      ...(r.error ? { error: r.error.message.slice(0, 500) } : {}),
    })),
    ...(items.length > REPORTED_ITEMS ? { items_omitted: items.length - REPORTED_ITEMS } : {}),
  };
};
