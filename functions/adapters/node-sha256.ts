import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';

const bytes = (data: string | ArrayBuffer | ArrayBufferView): string | Uint8Array =>
  typeof data === 'string' ? data : data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);

/** SHA-256 (HMAC when given a secret) in the shape @smithy/signature-v4 asks for, on node:crypto. */
export class NodeSha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(bytes(data));
  }
  reset(): void {}
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}
