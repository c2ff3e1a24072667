// An esbuild plugin for the CLI's bundles: aws-local-stepfunctions reads every path of the definition (each
// Choice rule of Route, a Task's paths) through its own binding of jsonpath-plus's `JSONPath`, whose
// constructor throws each scalar result out to hand it back. The binding it imports as `jp` is replaced by
// functions/hosts/local/jsonpath-direct.ts, which reads a simple path itself and hands any other to the
// library. The build fails when the library no longer imports it so (a new version): look at this file again.
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';

const BINDING = 'import { JSONPath as jp } from "jsonpath-plus";';

export const directJsonPathQueries = ({ root }) => ({
  name: 'direct-jsonpath-queries',
  setup(build) {
    build.onLoad({ filter: /aws-local-stepfunctions[\\/]build[\\/]main\.node\.esm\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const calls = source.match(/\bjp\(/g)?.length ?? 0;
      if (!source.includes(BINDING) || calls !== 2) {
        return { errors: [{ text: `${args.path}: not the JSONPath binding scripts/direct-jsonpath-queries.mjs replaces (${calls} calls of jp)` }] };
      }
      const direct = JSON.stringify(`${root}functions/hosts/local/jsonpath-direct.ts`);
      const replaced = [
        'import { JSONPath as jpLibrary } from "jsonpath-plus";',
        `import { directJsonPath } from ${direct};`,
        'const jp = (options) => directJsonPath(options, jpLibrary);',
      ].join('\n');
      return { contents: source.replace(BINDING, replaced), loader: 'js', resolveDir: dirname(args.path) };
    });
  },
});
