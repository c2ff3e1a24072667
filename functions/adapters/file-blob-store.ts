import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BlobPathError, type BlobRef, type BlobStore, blobRefOf, CorruptItemError, StoreUnavailableError } from '../core/index.ts';

/** Blobs as files under `<stateDir>/blobs` (the local host); upload URLs are `file:` URLs. */
export class FileBlobStore implements BlobStore {
  readonly root: string;

  constructor(stateDir: string) {
    this.root = join(resolve(stateDir), 'blobs');
  }

  async put(key: string, body: string): Promise<BlobRef> {
    await writeFileAtomically(this.pathOf(key), body);
    return blobRefOf(key, body);
  }

  async get(ref: BlobRef): Promise<string> {
    let body: string;
    try {
      body = await readFile(this.pathOf(ref.key), 'utf8');
    } catch (error) {
      throw new StoreUnavailableError(`blob ${ref.key} cannot be read from ${this.root}`, { cause: error, details: { key: ref.key } });
    }
    checkBlob(ref, body);
    return body;
  }

  async uploadUrl(key: string): Promise<string> {
    return pathToFileURL(this.pathOf(key)).href;
  }

  async downloadUrl(key: string): Promise<string> {
    return pathToFileURL(this.pathOf(key)).href;
  }

  /** The keys of the blobs under `prefix` (a folder of keys, such as `runs/<runId>/`), at any depth; none when it does not exist. */
  async keysUnder(prefix: string): Promise<string[]> {
    const folder = this.pathOf(prefix);
    // Almost always absent (a run whose outputs all fit in its records): one stat, where node:fs/promises would be loaded for the listing (~3 ms of a CLI resume here).
    if (!existsSync(folder)) return [];
    const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    });
    return entries.filter((e) => e.isFile()).map((e) => relative(this.root, join(e.parentPath, e.name)).split(sep).join('/'));
  }

  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  /** The file a key names; keys never leave the blob directory. */
  pathOf(key: string): string {
    const path = resolve(this.root, key);
    if (!path.startsWith(this.root + sep)) throw new BlobPathError(`blob key ${JSON.stringify(key)} escapes the blob directory`);
    return path;
  }
}

/** A full disk (or quota, or file size limit): the store's own error, saying where and what to do. */
const NO_SPACE = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);

/**
 * Writes a whole file or nothing: a temp file renamed into place. A write that fails (a full disk) leaves
 * no partial file behind, and a full disk is a StoreUnavailableError naming the directory (the step is
 * retried, then the run stops resumable), not a Node stack.
 */
export async function writeFileAtomically(path: string, body: string): Promise<void> {
  const temp = `${path}.${process.pid}.${Date.now()}.tmp`;
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(temp, body, 'utf8');
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== undefined && NO_SPACE.has(code)) {
      throw new StoreUnavailableError(
        `no space left to write ${Buffer.byteLength(body)} bytes under ${dirname(path)} (${code}): free some space there, then resume the run`,
        { cause: error, details: { path: dirname(path), errno: code } },
      );
    }
    throw error;
  }
}

/** Rejects a body that is not the one the reference was made for (truncated, overwritten, tampered with). */
export function checkBlob(ref: BlobRef, body: string): void {
  const actual = blobRefOf(ref.key, body);
  if (actual.bytes !== ref.bytes || actual.sha256 !== ref.sha256) {
    throw new CorruptItemError(`blob ${ref.key} does not match its reference (${actual.bytes} bytes, expected ${ref.bytes})`, {
      details: { key: ref.key, expected: ref, actual },
    });
  }
}

export const filePathOfUrl = (url: string): string => fileURLToPath(url);
