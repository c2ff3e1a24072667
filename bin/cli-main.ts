import * as z from '../functions/core/zod.ts';
import type { LocalHostOptions, RepairHandler } from '../functions/hosts/local/local-host.ts';

// The CLI's composition root, shared by the bundle (dist/flowmend.cjs, loaded by bin/flowmend.cjs) and
// the TypeScript fallback (bin/flowmend.ts). No top-level await: the bundle is CommonJS.

// The repair handler (the node catalog, the Anthropic SDK) loads at the first repair, not at every start.
const makeRepairHandler: NonNullable<LocalHostOptions['makeRepairHandler']> = (deps) => {
  let handler: Promise<RepairHandler> | undefined;
  return async (event) => {
    handler ??= import('../functions/hosts/lambda/repair.ts').then(({ envRepairHandler }) => envRepairHandler(process.env)(deps));
    return (await handler)(event);
  };
};

let streamsGuarded = false;

/** Runs one command line (argv without node and the script) and sets the process's exit code. */
export const main = async (argv: readonly string[]): Promise<number> => {
  // zod 4 compiles each object schema with `new Function` on its first parse, which pays off after many
  // parses; a command parses each schema a few times and ends (resume: ~20 ms less without). Only the
  // long-lived `serve` keeps the compiled parsers. The setting is read when a schema is built, so it is
  // made before the CLI's modules are imported.
  z.config({ jitless: argv[0] !== 'serve' });
  const { runCli } = await import('../functions/hosts/cli/commands.ts');

  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  // A reader that goes away (`| head`) must not stop a run half-way: the run finishes and stays durable.
  if (!streamsGuarded) {
    streamsGuarded = true;
    for (const stream of [process.stdout, process.stderr]) {
      stream.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EPIPE') throw error;
      });
    }
  }

  const code = await runCli(argv, {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    hostOptions: { makeRepairHandler },
  });
  process.exitCode = code;
  // serve leaves runs it was driving in the background; they are durable and the next serve resumes them.
  if (argv[0] === 'serve') process.exit(code);
  return code;
};
