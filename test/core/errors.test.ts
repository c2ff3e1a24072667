import { describe, expect, it } from 'vitest';
import { buildDefinition, runnerStateName, STATE } from '../../functions/core/definition.ts';
import { BlobPathError, CorruptItemError, ItemTooLargeError, StoreError, StoreUnavailableError, TransientError } from '../../functions/core/errors.ts';
import { ENGINE_ERROR_KINDS, ENGINE_RETRY, RUNNER_ERROR_KINDS, TRANSIENT_RETRY } from '../../functions/core/retry-policy.ts';

const definition = buildDefinition({ advance: 'advance', repair: 'repair', continueRun: 'continue', interrupted: 'interrupted', runners: { shell: 'shell' } });
const retriedIn = (state: string): string[] => ((definition.States[state]?.Retry ?? []) as { ErrorEquals: string[] }[]).flatMap((r) => r.ErrorEquals);

describe('error kinds and the retries derived from them', () => {
  it('names each kind by the name its errors carry (what ErrorEquals matches)', () => {
    for (const [name, Kind] of Object.entries({ ...RUNNER_ERROR_KINDS, ...ENGINE_ERROR_KINDS })) {
      const error = new (Kind as unknown as new (message: string) => Error)('m');
      expect(error.name).toBe(name);
    }
  });

  it('says per class whether the same call may pass later', () => {
    expect(new TransientError('t').retryable).toBe(true);
    expect(new StoreUnavailableError('s').retryable).toBe(true);
    for (const error of [new CorruptItemError('c'), new ItemTooLargeError('i'), new BlobPathError('b')]) {
      expect(error.retryable, error.name).toBe(false);
      // Still a store failure for code that handles any of them.
      expect(error).toBeInstanceOf(StoreError);
    }
  });

  it('retries an unavailable store in Advance, and never a corrupt item, an item over 400 KB or a blob path escape', () => {
    expect(ENGINE_RETRY.errors).toEqual(['StoreUnavailableError']);
    expect(retriedIn(STATE.advance)).toContain('StoreUnavailableError');
    for (const state of [STATE.advance, STATE.repair, runnerStateName('shell')]) {
      for (const name of ['CorruptItemError', 'ItemTooLargeError', 'BlobPathError', 'StaleRunError', 'InvalidInputError']) {
        expect(retriedIn(state), `${state} retries ${name}`).not.toContain(name);
      }
    }
    expect(retriedIn(runnerStateName('shell'))).toEqual(expect.arrayContaining(TRANSIENT_RETRY.errors));
  });
});
