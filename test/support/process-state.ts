// Whether a process the test started has ended, read from /proc.
import { readFile } from 'node:fs/promises';

/** Whether a process is gone (a zombie, which no init may reap here, counts as gone), waiting a little. */
export const processGone = async (pid: number): Promise<boolean> => {
  for (let tries = 0; tries < 50; tries += 1) {
    const state = await readFile(`/proc/${pid}/stat`, 'utf8').then(
      (t) => t.slice(t.lastIndexOf(')') + 2, t.lastIndexOf(')') + 3),
      () => 'gone',
    );
    if (state === 'gone' || state === 'Z' || state === 'X') return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
};
