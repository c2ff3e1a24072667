/** What a `batch_progress` event carries. */
export interface BatchProgress {
  done: number;
  total: number;
  failed: number;
  replayed?: number;
}

/** `  each... 13/20` (pflow's batch progress), with the failed and replayed items when there are any. */
export const batchProgressLine = (nodeId: string, data: Partial<BatchProgress> | Record<string, unknown>): string => {
  const { done = 0, total = 0, failed = 0, replayed = 0 } = data as Partial<BatchProgress>;
  const notes = [failed > 0 ? `${failed} failed` : '', replayed > 0 ? `${replayed} replayed` : ''].filter(Boolean).join(', ');
  return `  ${nodeId}... ${done}/${total}${notes ? ` (${notes})` : ''}`;
};

/** Lines per batch a terminal gets at most (a 10,000-item batch must not print 10,000 lines). */
const LINES_PER_BATCH = 20;

/** Lets a batch's progress through about every 1/20th of its items, and always its last line. */
export class BatchProgressThrottle {
  private readonly last = new Map<string, number>();

  due(nodeId: string, data: BatchProgress): boolean {
    if (data.done === 0) return false;
    const before = this.last.get(nodeId);
    const step = Math.max(1, Math.ceil(data.total / LINES_PER_BATCH));
    if (before !== undefined && data.done !== data.total && data.done - before < step) return false;
    if (before === data.done) return false;
    this.last.set(nodeId, data.done);
    return true;
  }
}
