import type { Workflow } from './ir.ts';
import type { NodeRecord, RunItem } from './run-model.ts';

// What one process keeps between engine steps. Everything here is either immutable once written
// (node records, IR versions) or trusted only with proof that it is current (the run item's rev).

const evictOldest = <K, V>(map: Map<K, V>, limit: number): void => {
  if (map.size >= limit) map.delete(map.keys().next().value as K);
};

/** How often each cache answered or missed: tests and benchmarks read these. */
export interface EngineCacheStats {
  runHits: number;
  runMisses: number;
  outputHits: number;
  outputMisses: number;
  irHits: number;
  irMisses: number;
}

const noStats = (): EngineCacheStats => ({ runHits: 0, runMisses: 0, outputHits: 0, outputMisses: 0, irHits: 0, irMisses: 0 });

export interface EngineCacheLimits {
  runs: number;
  outputs: number;
  irVersions: number;
}

const DEFAULT_LIMITS: EngineCacheLimits = { runs: 64, outputs: 256, irVersions: 200 };

/**
 * The engine's process-local caches, as a dependency (`EngineDeps.cache`): a host keeps one for as
 * long as its process lives (a Lambda's cold start, the local host); a test makes its own, reads
 * `stats` and calls `clear()`.
 */
export class EngineCache {
  readonly stats: EngineCacheStats = noStats();
  private readonly limits: EngineCacheLimits;
  /**
   * Node records never change once written, so the outputs of recent ones are kept: the next node
   * usually reads the previous node's outputs, and then needs no store read.
   */
  private readonly outputs = new Map<string, { nodeId: string; outputs: Record<string, unknown> }>();
  /**
   * The run item as this process last wrote it. A payload whose `rev` matches proves it is current
   * (any later write changes `rev`), so the next step can skip reading it; a takeover by another owner
   * still fails the conditional write. The object is handed over, not copied (a long run's item is
   * large): recalling it takes it out, and the step that changes it remembers it again once written.
   */
  private readonly runs = new Map<string, RunItem>();
  /** IR versions never change once written, so they are kept by run and version. */
  private readonly irVersions = new Map<string, Workflow>();
  /** A run's records as listed while its item was at `rev`, for the walk that follows (rememberListing). */
  private readonly listings = new Map<string, { rev: string; records: readonly NodeRecord[] }>();

  constructor(limits: Partial<EngineCacheLimits> = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
  }

  /**
   * Caches for a host that drives up to `runs` runs at once (`serve`): each keeps its run item, the outputs
   * its next nodes read and its IR version between steps. Sized below that, runs stepping in turn evict
   * each other, and every step reads and parses its run item again.
   */
  static forConcurrentRuns(runs: number): EngineCache {
    return new EngineCache({
      runs: Math.max(DEFAULT_LIMITS.runs, 2 * runs),
      outputs: Math.max(DEFAULT_LIMITS.outputs, 8 * runs),
      irVersions: Math.max(DEFAULT_LIMITS.irVersions, 2 * runs),
    });
  }

  rememberOutputs(record: NodeRecord): void {
    if (record.status === 'failed') return;
    evictOldest(this.outputs, this.limits.outputs);
    this.outputs.set(`${record.runId}#${record.seq}`, { nodeId: record.nodeId, outputs: record.outputs ?? {} });
  }

  recallOutputs(runId: string, seq: number): { nodeId: string; outputs: Record<string, unknown> } | undefined {
    const found = this.outputs.get(`${runId}#${seq}`);
    if (found) this.stats.outputHits += 1;
    else this.stats.outputMisses += 1;
    return found;
  }

  rememberRun(run: RunItem): void {
    this.runs.delete(run.runId);
    evictOldest(this.runs, this.limits.runs);
    this.runs.set(run.runId, run);
  }

  recallRun(runId: string, rev: string | undefined): RunItem | undefined {
    const run = this.runs.get(runId);
    this.runs.delete(runId);
    const current = rev !== undefined && run?.rev === rev ? run : undefined;
    if (current) this.stats.runHits += 1;
    else this.stats.runMisses += 1;
    return current;
  }

  recallIr(runId: string, version: number): Workflow | undefined {
    const found = this.irVersions.get(`${runId}#${version}`);
    if (found) this.stats.irHits += 1;
    else this.stats.irMisses += 1;
    return found;
  }

  rememberIr(runId: string, version: number, ir: Workflow): void {
    evictOldest(this.irVersions, this.limits.irVersions);
    this.irVersions.set(`${runId}#${version}`, ir);
  }

  /**
   * A run's records as the store listed them while the run item was at `rev` (a resume's patch check, before
   * its claim, which writes no record and keeps the rev): its walk, the first step of the execution launched
   * next, takes them instead of listing them again. Taken once, and only at that rev (an engine step that
   * writes records writes a new one). Without records (or a rev), forgets the run's.
   */
  rememberListing(runId: string, rev: string | undefined, records: readonly NodeRecord[] | undefined): void {
    this.listings.delete(runId);
    if (rev === undefined || records === undefined) return;
    evictOldest(this.listings, this.limits.runs);
    this.listings.set(runId, { rev, records });
  }
  takeListing(runId: string, rev: string | undefined): readonly NodeRecord[] | undefined {
    const listing = this.listings.get(runId);
    this.listings.delete(runId);
    return rev !== undefined && listing?.rev === rev ? listing.records : undefined;
  }
  /** Forgets everything and zeroes the stats. */
  clear(): void {
    this.outputs.clear();
    this.runs.clear();
    this.irVersions.clear();
    this.listings.clear();
    Object.assign(this.stats, noStats());
  }
}
