import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { isEngineVariable } from '../core/index.ts';

/**
 * A command can read its parent's environment as the process started with it (`/proc/$PPID/environ`, or
 * any process of the same user): the kernel shows the block the process was started with, not what
 * `process.env` holds now. So, once, before the first command starts, the values of the engine's own
 * variables (AWS_*, ANTHROPIC_*, FLOWMEND_*) are set again in `process.env` (a copy the engine keeps
 * using) and overwritten with `x` in that block, through /proc/self/mem. Linux only; elsewhere, or where
 * /proc/self/mem cannot be written, it answers false and nothing changes.
 */
let scrubbed: boolean | undefined;

export const scrubEngineEnvironment = (): boolean => {
  if (scrubbed !== undefined) return scrubbed;
  scrubbed = false;
  try {
    const stat = readFileSync('/proc/self/stat', 'latin1');
    // Fields after the command name: the first is field 3 (state); env_start is field 50, env_end 51.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = Number(fields[47]);
    const block = readFileSync('/proc/self/environ', 'latin1');
    if (!Number.isSafeInteger(start) || start <= 0 || Number(fields[48]) - start !== block.length) return false;
    const writes: { at: number; length: number }[] = [];
    let offset = 0;
    for (const entry of block.split('\0')) {
      const eq = entry.indexOf('=');
      const name = eq > 0 ? entry.slice(0, eq) : '';
      if (name !== '' && isEngineVariable(name) && eq + 1 < entry.length && process.env[name] !== undefined) {
        // A copy first: process.env now reads it from the heap, not from the block about to be overwritten.
        process.env[name] = `${process.env[name]}`;
        writes.push({ at: start + offset + eq + 1, length: entry.length - eq - 1 });
      }
      offset += entry.length + 1;
    }
    if (writes.length > 0) {
      const fd = openSync('/proc/self/mem', 'r+');
      try {
        for (const { at, length } of writes) writeSync(fd, Buffer.alloc(length, 'x'), 0, length, at);
      } finally {
        closeSync(fd);
      }
    }
    scrubbed = true;
  } catch {
    // No /proc (macOS), or a sandbox that refuses writes to /proc/self/mem.
  }
  return scrubbed;
};
