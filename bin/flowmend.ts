import { runCli } from '../functions/hosts/cli/commands.ts';
import type { LocalHostOptions, RepairHandler } from '../functions/hosts/local/local-host.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// A reader that goes away (`| head`) must not stop a run half-way: the run finishes and stays durable.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

// The repair handler (the node catalog, the Anthropic SDK) loads at the first repair, not at every start.
const makeRepairHandler: NonNullable<LocalHostOptions['makeRepairHandler']> = (deps) => {
  let handler: Promise<RepairHandler> | undefined;
  return async (event) => {
    handler ??= import('../functions/hosts/lambda/repair.ts').then(({ envRepairHandler }) => envRepairHandler(process.env)(deps));
    return (await handler)(event);
  };
};

const code = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  hostOptions: { makeRepairHandler },
});
process.exitCode = code;
// serve leaves runs it was driving in the background; they are durable and the next serve resumes them.
if (process.argv[2] === 'serve') process.exit(code);
