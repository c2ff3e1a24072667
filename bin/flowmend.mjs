#!/usr/bin/env node
// The `flowmend` bin: runs the bundle that `npm run build` (and `prepare`, on npm ci) writes to dist/,
// which starts without transpiling. When the bundle is missing or older than a source file (a fresh
// edit, an install without dev dependencies), it runs the TypeScript through tsx instead.
import { readdirSync, statSync } from 'node:fs';

const root = new URL('..', import.meta.url);
const bundle = new URL('dist/flowmend.mjs', root);

const mtime = (url) => {
  try {
    return statSync(url).mtimeMs;
  } catch {
    return undefined;
  }
};

/** Newest modification time among the CLI's sources (bin/flowmend.ts and functions/). */
const newestSource = () => {
  let newest = mtime(new URL('bin/flowmend.ts', root)) ?? 0;
  const dir = new URL('functions/', root);
  for (const entry of readdirSync(dir, { recursive: true })) {
    if (entry.endsWith('.ts')) newest = Math.max(newest, mtime(new URL(entry, dir)) ?? 0);
  }
  return newest;
};

const built = mtime(bundle);
if (built !== undefined && built >= newestSource()) {
  await import(bundle.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('flowmend.ts', import.meta.url).href);
}
