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

  /** The kept bytes as UTF-8; a note at the end says how much was dropped. */
  text(): string {
    const body = Buffer.concat(this.chunks, this.kept).toString('utf8');
    if (!this.truncated) return body;
    return `${body}\n[flowmend: output truncated to the first ${this.kept} of ${this.total} bytes]`;
  }
}
