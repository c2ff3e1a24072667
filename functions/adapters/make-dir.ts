import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * `mkdir -p` one level at a time. Node 20's `mkdirSync(path, { recursive: true })` never returns for
 * some paths (`/proc/nope`: procfs answers ENOENT for the child, and Node retries forever), so each
 * missing level is made by a plain mkdir that throws the real error at once. Bounded by the path's depth.
 */
export const makeDir = (dir: string): void => {
  const missing: string[] = [];
  for (let path = dir; !existsSync(path); path = dirname(path)) {
    missing.unshift(path);
    if (dirname(path) === path) break;
  }
  for (const path of missing) {
    try {
      mkdirSync(path);
    } catch (error) {
      // Another process made it in the meantime.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(path).isDirectory()) throw error;
    }
  }
};
