import { builtOnFirstUse } from './lazy-schema.ts';
import { LlmUsageSchema } from './node-type.ts';
import * as z from './zod.ts';

/** How long a memoized result is reused by default (pflow's memo cache keeps 24 h). */
export const DEFAULT_MEMO_TTL_S = 24 * 60 * 60;

/** A node result kept for other runs: the outputs of a successful visit, by its cache key (type + resolved params). */
export const MemoEntrySchema = builtOnFirstUse(() =>
  z.object({
    key: z.string().check(z.minLength(1)),
    nodeType: z.string(),
    outputs: z.record(z.string(), z.unknown()),
    action: z.string(),
    usage: z.optional(LlmUsageSchema),
    storedAt: z.number(),
    /** Epoch milliseconds after which the entry is not reused. */
    expiresAt: z.number(),
  }),
);
export type MemoEntry = z.infer<typeof MemoEntrySchema>;

/** The memo cache (pflow's cross-run cache): results reused across runs until they expire. */
export interface MemoStore {
  /** The entry stored under `key`, unless there is none or it expired by `now`. */
  getMemo(key: string, now: number): Promise<MemoEntry | undefined>;
  /** Stores (or replaces) the entry under its key. */
  putMemo(entry: MemoEntry): Promise<void>;
}

/** Memo entries in memory (tests, and a host without a store of its own). */
export class MemoryMemoStore implements MemoStore {
  private readonly entries = new Map<string, MemoEntry>();
  async getMemo(key: string, now: number): Promise<MemoEntry | undefined> {
    const entry = this.entries.get(key);
    return entry && entry.expiresAt > now ? structuredClone(entry) : undefined;
  }
  async putMemo(entry: MemoEntry): Promise<void> {
    this.entries.set(entry.key, structuredClone(entry));
  }
}
