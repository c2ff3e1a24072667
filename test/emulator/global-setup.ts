import { existsSync } from 'node:fs';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { EMULATOR_STACK_NAME } from '../../infra/emulator-stack.ts';
import { deployStack } from '../../scripts/emulator/deploy.ts';
import { cdk, type Emulator, startEmulator } from '../../scripts/emulator/emulator.ts';
import type { EmulatorState } from './support/emulator-state.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    emulatorStateFile: string;
  }
}

/**
 * Starts the AWS emulator and deploys the stack to it, in the background: the setup returns at once, the
 * other projects' tests run meanwhile, and the emulator's scenarios (which run after them) wait for the
 * state file this writes when the stack is up, or when it could not be brought up (with why).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  // A stack already up (`npm run deploy:emulator` writes this file): the scenarios run against it as it is.
  const running = process.env.FLOWMEND_EMULATOR_STATE;
  if (running) {
    project.provide('emulatorStateFile', running);
    return async () => undefined;
  }
  const stateDir = await mkdtemp(join(tmpdir(), 'flowmend-emulator-'));
  const stateFile = join(stateDir, 'state.json');
  project.provide('emulatorStateFile', stateFile);
  let emulator: Emulator | undefined;
  const startedAt = Date.now();
  const bringUp = async (): Promise<EmulatorState> => {
    emulator = await startEmulator({ stateDir: join(stateDir, 'moto') });
    const assembly = await assemblyDir(stateDir, emulator.endpoint);
    const outputs = await deployStack({ endpoint: emulator.endpoint, assembly, stack: EMULATOR_STACK_NAME, outputsFile: join(stateDir, 'outputs.json') });
    return { ok: true, endpoint: emulator.endpoint, callsFile: emulator.callsFile, outputs, assembly, deployMs: Date.now() - startedAt };
  };
  // Written whole, then renamed: a scenario polling for the file never reads half of it.
  const publish = async (state: EmulatorState) => {
    await writeFile(`${stateFile}.partial`, JSON.stringify(state));
    await rename(`${stateFile}.partial`, stateFile);
  };
  const done = bringUp().then(publish, (error: unknown) => publish({ ok: false, error: error instanceof Error ? error.message : String(error) }));
  return async () => {
    await done;
    await emulator?.stop();
    if (!process.env.FLOWMEND_KEEP_EMULATOR_STATE) await rm(stateDir, { recursive: true, force: true });
  };
}

/** The cloud assembly `npm test` synthesized (with the emulator's stack), else a synth of our own. */
async function assemblyDir(stateDir: string, endpoint: string): Promise<string> {
  const fromScript = process.env.FLOWMEND_SYNTH_OUT;
  if (fromScript && existsSync(join(fromScript, `${EMULATOR_STACK_NAME}.template.json`))) return fromScript;
  const outdir = join(stateDir, 'cdk.out');
  await cdk(['synth', '--quiet', '-c', 'flowmend:emulator=true', '-o', outdir], endpoint);
  return outdir;
}
