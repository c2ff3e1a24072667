// An esbuild plugin for the CLI bundle: an import from functions/core/index.ts (the one entry to core that
// the architecture test enforces) becomes imports of the modules that define the names, at build time.
//
// Why: with code splitting, esbuild assigns a module to the chunks of every entry point that reaches it,
// and an entry that imports the barrel reaches every module the barrel re-exports. The whole of core
// (its run model, state payloads, batch state: ~45 ms of zod schema construction) then sat in one chunk
// that `flowmend validate` loaded although it needs the IR, the node specs and validation only. Importing
// the defining modules lets each command's chunk hold what it uses (with "sideEffects" in package.json,
// esbuild drops a module none of whose exports is used).
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

const IMPORT_FROM_BARREL = /import\s+(type\s+)?\{([^}]*)\}\s+from\s+'([^']*\/core\/index\.ts)';/g;
const REEXPORT = /export\s+(type\s+)?\{([^}]*)\}\s+from\s+'(\.[^']+)';/g;

const names = (list) =>
  list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** The value names a module re-exports (`export { a, b as c } from './x.ts'`): exported name -> { file, name }. */
const reexportsOf = async (file) => {
  const map = new Map();
  for (const [, typeOnly, list, from] of (await readFile(file, 'utf8')).matchAll(REEXPORT)) {
    if (typeOnly) continue;
    for (const spec of names(list)) {
      if (spec.startsWith('type ')) continue;
      const [name, alias = name] = spec.split(/\s+as\s+/);
      map.set(alias, { file: join(dirname(file), from), name });
    }
  }
  return map;
};

/** exported name -> the module that defines it, following re-exports (validate.ts re-exports parseWorkflow, for one). */
const readBarrel = async (barrel) => {
  if (/^export\s+\*/m.test(await readFile(barrel, 'utf8'))) throw new Error(`${barrel}: 'export *' cannot be resolved by direct-core-imports`);
  const modules = new Map();
  const reexports = async (file) => {
    if (!modules.has(file)) modules.set(file, await reexportsOf(file));
    return modules.get(file);
  };
  const map = new Map();
  for (const [alias, first] of await reexports(barrel)) {
    let target = first;
    for (let next = (await reexports(target.file)).get(target.name); next; next = (await reexports(target.file)).get(target.name)) target = next;
    map.set(alias, target);
  }
  return map;
};

/** @param {{ root: string }} options */
export const directCoreImports = ({ root }) => ({
  name: 'direct-core-imports',
  setup(build) {
    const barrel = join(root, 'functions/core/index.ts');
    let exports;
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (!args.path.startsWith(root) || args.path.includes('/node_modules/') || args.path.startsWith(join(root, 'functions/core/'))) return undefined;
      const source = await readFile(args.path, 'utf8');
      if (!source.includes('/core/index.ts')) return undefined;
      exports ??= await readBarrel(barrel);
      const contents = source.replace(IMPORT_FROM_BARREL, (whole, typeOnly, list, from) => {
        if (resolve(dirname(args.path), from) !== barrel) return whole;
        // Newlines kept, so that line numbers in stack traces stay those of the source.
        const lines = '\n'.repeat(whole.split('\n').length - 1);
        if (typeOnly) return lines;
        const byFile = new Map();
        for (const spec of names(list)) {
          if (spec.startsWith('type ')) continue;
          const [name, local = name] = spec.split(/\s+as\s+/);
          const target = exports.get(name);
          if (!target) throw new Error(`${args.path}: '${name}' is not exported by functions/core/index.ts`);
          byFile.set(target.file, [...(byFile.get(target.file) ?? []), target.name === local ? local : `${target.name} as ${local}`]);
        }
        return [...byFile].map(([file, specs]) => `import { ${specs.join(', ')} } from ${JSON.stringify(file)};`).join(' ') + lines;
      });
      return { contents, loader: 'ts' };
    });
  },
});
