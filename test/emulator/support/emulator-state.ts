import { existsSync, readFileSync } from 'node:fs';
import { inject } from 'vitest';
import type { StackOutputs } from '../../../scripts/emulator/deploy.ts';

/** What the global setup writes once the stack is up on the emulator (or why it is not). */
export type EmulatorState =
  | { ok: true; endpoint: string; callsFile: string; outputs: StackOutputs; assembly: string; deployMs: number }
  | { ok: false; error: string };

const READY_TIMEOUT_MS = 8 * 60_000;

/** Waits for the global setup's deploy; throws its error if the stack could not be brought up. */
export async function deployedStack(): Promise<Extract<EmulatorState, { ok: true }>> {
  const file = inject('emulatorStateFile');
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`the emulator's stack was not up after ${READY_TIMEOUT_MS / 60_000} minutes`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const state = JSON.parse(readFileSync(file, 'utf8')) as EmulatorState;
  if (!state.ok) throw new Error(`the stack could not be deployed to the emulator: ${state.error}`);
  return state;
}
