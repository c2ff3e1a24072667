// The CLI bundle's asl-validator, loaded only when a definition is validated.
//
// aws-local-stepfunctions imports asl-validator at its top, and asl-validator builds its ajv schemas when
// it is evaluated: ~18 ms of every run and resume here, plus ~0.4 MB of ajv, jsonata and the validator to
// compile, even when the StateMachine is told not to validate. The CLI validates a definition once per
// state dir (functions/hosts/local/definition-memo.ts), so the validator is built into its own file,
// dist/asl-validator.cjs, and the interpreter's import of it becomes a function that requires that file
// at its first call: a definition validated before costs nothing, a new one is validated as before.
import { createRequire } from 'node:module';

const FILE = 'asl-validator.cjs';

export const lazyAslValidator = {
  name: 'lazy-asl-validator',
  setup(build) {
    build.onResolve({ filter: /^asl-validator$/ }, (args) =>
      args.importer.includes('aws-local-stepfunctions') ? { path: 'asl-validator', namespace: 'lazy-asl-validator' } : undefined,
    );
    build.onResolve({ filter: new RegExp(`^\\./${FILE.replace('.', '\\.')}$`) }, (args) =>
      args.namespace === 'lazy-asl-validator' ? { path: args.path, external: true } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy-asl-validator' }, () => ({
      // `require` is the bundle's own (its banner), relative to the chunk's file in dist/.
      contents: `export default (definition, options) => require('./${FILE}')(definition, options);`,
      loader: 'js',
    }));
  },
};

/** Builds dist/asl-validator.cjs from the asl-validator that aws-local-stepfunctions depends on (its own version). */
export const buildAslValidator = async (esbuild, root) => {
  const entry = createRequire(`${root}node_modules/aws-local-stepfunctions/package.json`).resolve('asl-validator');
  await esbuild.build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile: `dist/${FILE}`,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
};
