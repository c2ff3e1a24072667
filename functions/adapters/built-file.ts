import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * A file the build writes to dist/ beside the CLI bundle (a worker thread's or a helper process's entry), found
 * from the module that starts it: beside the bundle, whose URL every bundled module's `import.meta.url` is, or
 * in dist/ at the repository's root when run from the sources (`root`: that root relative to the module).
 * Undefined where none is built; the caller then does the work itself.
 */
export const findBuiltFile = (name: string, moduleUrl: string, root: string): string | undefined =>
  [`./${name}`, `${root}dist/${name}`].map((candidate) => fileURLToPath(new URL(candidate, moduleUrl))).find((path) => existsSync(path));
