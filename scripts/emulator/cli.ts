/**
 * `npm run deploy:emulator`: starts the AWS emulator (moto, scripts/emulator/server.py) on
 * http://localhost:4566 (or FLOWMEND_EMULATOR_PORT), synthesizes and deploys the stack to it, writes the
 * outputs to cdk.out/emulator-outputs.json (the shape of `cdk deploy --outputs-file`) and leaves the
 * emulator running for `flowmend --api`, the viewer and the AWS CLI. `npm run emulator:down` stops it.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EMULATOR_STACK_NAME } from '../../infra/emulator-stack.ts';
import { deployStack, emulatorApiUrl } from './deploy.ts';
import { cdk, EMULATOR_CREDENTIALS, EMULATOR_REGION, startEmulator } from './emulator.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const STATE_DIR = join(ROOT, '.flowmend-emulator');
const PID_FILE = join(STATE_DIR, 'emulator.pid');
const OUTPUTS_FILE = join(ROOT, 'cdk.out', 'emulator-outputs.json');

const fail = (message: string): never => {
  process.stderr.write(`flowmend emulator: ${message}\n`);
  process.exit(1);
};

const running = (): number | undefined => {
  if (!existsSync(PID_FILE)) return undefined;
  const pid = Number(readFileSync(PID_FILE, 'utf8'));
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
};

async function up(): Promise<void> {
  const port = Number(process.env.FLOWMEND_EMULATOR_PORT ?? 4566);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) fail(`FLOWMEND_EMULATOR_PORT is ${process.env.FLOWMEND_EMULATOR_PORT}: a port number`);
  if (running() !== undefined) fail(`an emulator started here is still running (pid ${running()}): npm run emulator:down first`);
  rmSync(STATE_DIR, { recursive: true, force: true });
  mkdirSync(STATE_DIR, { recursive: true });
  process.stdout.write(`starting the AWS emulator (moto) on http://localhost:${port} ...\n`);
  const emulator = await startEmulator({ stateDir: STATE_DIR, port, detached: true });
  writeFileSync(PID_FILE, String(emulator.pid));
  try {
    // FLOWMEND_EMULATOR_ASSEMBLY: a cloud assembly already synthesized with `-c flowmend:emulator=true`.
    const given = process.env.FLOWMEND_EMULATOR_ASSEMBLY;
    const assembly = given ?? join(ROOT, 'cdk.out', 'emulator');
    if (given === undefined) {
      process.stdout.write('synthesizing the stack (cdk synth) ...\n');
      await cdk(['synth', '--quiet', '-c', 'flowmend:emulator=true', '-o', assembly], emulator.endpoint);
    }
    process.stdout.write(`deploying ${EMULATOR_STACK_NAME} (cdk bootstrap, cdk deploy) ...\n`);
    mkdirSync(join(ROOT, 'cdk.out'), { recursive: true });
    const outputs = await deployStack({ endpoint: emulator.endpoint, assembly, stack: EMULATOR_STACK_NAME, outputsFile: OUTPUTS_FILE });
    const state = { ok: true, endpoint: emulator.endpoint, callsFile: emulator.callsFile, outputs, assembly, deployMs: 0 };
    writeFileSync(join(STATE_DIR, 'state.json'), JSON.stringify(state, null, 2));
    const api = emulatorApiUrl(emulator.endpoint, outputs.RestApiId ?? '');
    process.stdout.write(
      [
        '',
        `deployed; outputs in ${OUTPUTS_FILE}`,
        `REST API: ${api}`,
        'try it (requests are signed with SigV4 from these credentials):',
        `  export AWS_ACCESS_KEY_ID=${EMULATOR_CREDENTIALS.accessKeyId} AWS_SECRET_ACCESS_KEY=${EMULATOR_CREDENTIALS.secretAccessKey} AWS_REGION=${EMULATOR_REGION}`,
        `  npx flowmend run examples/hello.json --api ${api}`,
        `  aws --endpoint-url ${emulator.endpoint} stepfunctions list-executions --state-machine-arn ${outputs.ExpressStateMachineArn ?? ''}`,
        'stop it with: npm run emulator:down',
        '',
      ].join('\n'),
    );
  } catch (error) {
    await emulator.stop();
    rmSync(PID_FILE, { force: true });
    fail(error instanceof Error ? error.message : String(error));
  }
}

function down(): void {
  const pid = running();
  if (pid === undefined) {
    process.stdout.write('no emulator started here is running\n');
    return;
  }
  process.kill(pid, 'SIGTERM');
  rmSync(PID_FILE, { force: true });
  process.stdout.write(`stopped the emulator (pid ${pid})\n`);
}

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const command = process.argv[2];
if (command === 'up') await up();
else if (command === 'down') down();
else fail(`unknown command ${command ?? '(none)'}: up or down`);
