import { runCli } from '../functions/cli/commands.ts';
import { envRepairHandler } from '../functions/handlers/repair.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const code = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  hostOptions: { makeRepairHandler: envRepairHandler(process.env) },
});
process.exitCode = code;
