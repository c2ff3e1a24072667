import { spawn } from 'node:child_process';

/**
 * Opens a URL in the user's browser: `$FLOWMEND_OPENER` when set (`none` to only print it), else
 * `open` on macOS, `xdg-open` elsewhere. Resolves to whether an opener took it; the caller prints
 * the URL either way, so a machine with no browser still gets something to click.
 */
export const openUrl = (url: string, env: Readonly<Record<string, string | undefined>>): Promise<boolean> => {
  const opener = env.FLOWMEND_OPENER ?? (process.platform === 'darwin' ? 'open' : 'xdg-open');
  if (opener === 'none' || opener === '') return Promise.resolve(false);
  return new Promise((resolve) => {
    try {
      const child = spawn(opener, [url], { stdio: 'ignore', detached: true });
      child.once('error', () => resolve(false));
      child.once('spawn', () => {
        child.unref();
        resolve(true);
      });
    } catch {
      resolve(false);
    }
  });
};
