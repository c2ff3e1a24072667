import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

/** The page's files, built once per process. */
export interface ViewerAssets {
  js: string;
  css: string;
  html: string;
  /** Total of the three, gzipped (the budget is 300 KB). */
  gzipBytes: number;
}

/** The page's source: beside this module, or (from the CLI bundle in dist/) in the sources it was built from. */
const entry = (): string => {
  const candidates = [new URL('./ui/main.ts', import.meta.url), new URL('../functions/hosts/viewer/ui/main.ts', import.meta.url)].map((u) => fileURLToPath(u));
  const found = candidates.find((path) => existsSync(path));
  if (!found) throw new Error(`the run viewer's sources are not at ${candidates.join(' or ')}`);
  return found;
};

/** One shell for every page: the script picks the page from the path. No inline script, so the CSP can forbid them. */
const HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>flowmend runs</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/ui/assets/viewer.css">
<script type="module" src="/ui/assets/viewer.js"></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><a href="/ui/">flowmend</a><span>run viewer</span></header>
<div id="app"></div>
</body>
</html>
`;

let built: Promise<ViewerAssets> | undefined;

const withSizes = (js: string, css: string): ViewerAssets => ({
  js,
  css,
  html: HTML,
  gzipBytes: gzipSync(js).length + gzipSync(css).length + gzipSync(HTML).length,
});

/** The page as `npm run build` (and `prepare`) bundled it: beside the CLI bundle in dist/, or from the sources' tree. */
const prebuilt = (): ViewerAssets | undefined => {
  const dirs = [new URL('./viewer/', import.meta.url), new URL('../../../dist/viewer/', import.meta.url)].map((u) => fileURLToPath(u));
  const dir = dirs.find((d) => existsSync(`${d}viewer.js`) && existsSync(`${d}viewer.css`));
  return dir === undefined ? undefined : withSizes(readFileSync(`${dir}viewer.js`, 'utf8'), readFileSync(`${dir}viewer.css`, 'utf8'));
};

/**
 * The front end, bundled with esbuild at build time (dagre and zod included, minified): the page loads
 * nothing from anywhere else, so it works offline. Without a build (a checkout run through tsx before
 * `npm run build`), it is bundled in memory once per process (~100 ms).
 */
export const viewerAssets = (): Promise<ViewerAssets> => {
  built ??= (async () => {
    const ready = prebuilt();
    if (ready) return ready;
    const { build } = await import('esbuild');
    const result = await build({
      entryPoints: [entry()],
      bundle: true,
      minify: true,
      write: false,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      outdir: 'viewer-out',
      entryNames: 'viewer',
      legalComments: 'none',
      logLevel: 'silent',
    });
    const js = result.outputFiles.find((f) => f.path.endsWith('.js'))?.text ?? '';
    const css = result.outputFiles.find((f) => f.path.endsWith('.css'))?.text ?? '';
    return withSizes(js, css);
  })();
  return built;
};
