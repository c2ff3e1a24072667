/** Collects a stream's bytes up to `limit`, counting (but dropping) the rest. */
export class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private total = 0;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    const room = this.limit - this.kept;
    if (room <= 0) return;
    const piece = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.chunks.push(piece);
    this.kept += piece.length;
  }

  get truncated(): boolean {
    return this.total > this.kept;
  }

  get totalBytes(): number {
    return this.total;
  }

  get keptBytes(): number {
    return this.kept;
  }

  /** The kept bytes as UTF-8, nothing added: what was dropped is the runner's warning, not text the next node reads. */
  text(): string {
    return Buffer.concat(this.chunks, this.kept).toString('utf8');
  }
}
