import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigurationError } from '../core/index.ts';
import { makeDir } from './make-dir.ts';

const KEY_BYTES = 32;

/**
 * The local host's callback key: 32 random bytes in `<stateDir>/callback.key` (mode 0600), made by the
 * first process that needs it. Every process on the state dir (the CLI, `serve`) mints the same tokens
 * with it; two that make it at once race on an exclusive link, and the loser reads the winner's.
 */
export const fileCallbackKey = (stateDir: string): (() => Promise<Uint8Array>) => {
  let key: Uint8Array | undefined;
  return async () => {
    key ??= readOrMake(join(stateDir, 'callback.key'), stateDir);
    return key;
  };
};

const readOrMake = (path: string, stateDir: string): Uint8Array => {
  try {
    return checked(readFileSync(path), path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  makeDir(stateDir);
  // Written whole under another name, then linked into place: a reader never sees a half-written key.
  const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(draft, randomBytes(KEY_BYTES), { flag: 'wx', mode: 0o600 });
  try {
    linkSync(draft, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(draft, { force: true });
  }
  return checked(readFileSync(path), path);
};

const checked = (key: Buffer, path: string): Uint8Array => {
  if (key.length < KEY_BYTES)
    throw new ConfigurationError(`${path} holds ${key.length} bytes; a callback key is ${KEY_BYTES} random bytes (delete it to make a new one)`);
  return key;
};
