import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../functions/core/classify.ts';
import { buildDefinition, STATE } from '../../functions/core/definition.ts';
import { NodeSchema } from '../../functions/core/ir.ts';
import { decideLoop, retryAfter } from '../../functions/core/repeat-node.ts';

const node = (extra: Record<string, unknown>) => NodeSchema.parse({ id: 'n', type: 'shell', params: { command: 'echo' }, ...extra });
const failure = (code: string, kind: 'error' | 'fatal' | 'warning' = 'error', category = 'execution_failure'): Outcome =>
  ({ kind, error: { node_id: 'n', category, code, message: code, fixable: kind === 'error' } }) as Outcome;

describe('retryAfter (a node with retry: what is tried again, after how long)', () => {
  const retried = node({ retry: { max: 4, wait: 2, backoff: 'exponential' } });

  it("tries an execution failure again with pflow's backoff (2, 4, 8 s; capped at 60), until max tries in all", () => {
    expect([1, 2, 3].map((attempt) => retryAfter(retried, failure('EXIT_NONZERO'), attempt))).toEqual([2, 4, 8]);
    expect(retryAfter(retried, failure('EXIT_NONZERO'), 4)).toBeUndefined();
    expect(retryAfter(node({ retry: { max: 9, wait: 50, backoff: 'exponential' } }), failure('TIMEOUT'), 3)).toBe(60);
    expect(retryAfter(node({ retry: { max: 3 } }), failure('FILE_NOT_FOUND'), 2)).toBe(1);
  });

  it("tries again once the state machine's own retries of a transient error are used up", () => {
    expect(retryAfter(retried, failure('RETRIES_EXHAUSTED', 'fatal', 'transient'), 1)).toBe(2);
  });

  it('does not try again what would fail the same way: params, templates, paths, 4xx, warnings, other fatal errors', () => {
    for (const code of ['PARAMS_INVALID', 'PATH_OUTSIDE_WORKSPACE', 'NOT_A_FILE', 'TRANSFORM_FAILED'])
      expect(retryAfter(retried, failure(code), 1), code).toBeUndefined();
    expect(retryAfter(retried, failure('TEMPLATE_UNRESOLVED', 'error', 'template'), 1)).toBeUndefined();
    expect(retryAfter(retried, failure('HTTP_STATUS'), 1)).toBeUndefined();
    expect(retryAfter(retried, failure('HTTP_STATUS', 'warning', 'non_repairable'), 1)).toBeUndefined();
    expect(retryAfter(retried, failure('ChildRunFailed', 'fatal', 'non_repairable'), 1)).toBeUndefined();
    expect(retryAfter(node({}), failure('EXIT_NONZERO'), 1)).toBeUndefined();
  });
});

describe('decideLoop (after an iteration that succeeded)', () => {
  const context = (outputs: Record<string, unknown>) => ({ inputs: { cap: '2' }, nodes: { n: outputs } });

  it('goes on while the condition holds (or until it does), and stops at max_iterations without an error', () => {
    expect(decideLoop(node({ loop: { while: '${n.more}' } }), 1, context({ more: true }))).toEqual({ kind: 'again' });
    expect(decideLoop(node({ loop: { while: '${n.more}' } }), 1, context({ more: 'false' }))).toEqual({ kind: 'stop', stopped: 'condition' });
    expect(decideLoop(node({ loop: { until: '${n.done}' } }), 1, context({ done: 0 }))).toEqual({ kind: 'again' });
    expect(decideLoop(node({ loop: { until: '${n.done}' } }), 1, context({ done: [1] }))).toEqual({ kind: 'stop', stopped: 'condition' });
    expect(decideLoop(node({ loop: { while: '${n.more}', max_iterations: '${cap}' } }), 2, context({ more: true }))).toEqual({
      kind: 'stop',
      stopped: 'max_iterations',
    });
    expect(decideLoop(node({ loop: { while: '${n.more}' } }), 100, context({ more: true }))).toEqual({ kind: 'stop', stopped: 'max_iterations' });
  });

  it('refuses a condition that is neither true nor false, and one that does not resolve, as repairable errors', () => {
    expect(decideLoop(node({ loop: { while: '${n.text}' } }), 1, context({ text: 'maybe' }))).toMatchObject({
      kind: 'error',
      error: { code: 'LOOP_CONDITION_NOT_BOOLEAN', fixable: true, message: expect.stringContaining('neither true nor false') },
    });
    expect(decideLoop(node({ loop: { while: '${n.missing}' } }), 1, context({}))).toMatchObject({
      kind: 'error',
      error: { code: 'LOOP_CONDITION_UNRESOLVED' },
    });
  });
});

describe('the definition: a retried try waits in a Wait state before its runner', () => {
  it("routes a run with waitS through RetryWait (SecondsPath), CheckRun and RouteRetry to the type's runner", () => {
    const asl = buildDefinition({ advance: 'a', repair: 'r', runners: { shell: 's', http: 'h' }, continueRun: 'c', interrupted: 'i' });
    const route = asl.States[STATE.route] as { Choices: { Next: string }[] };
    expect(route.Choices[0]).toEqual({
      And: [
        { Variable: '$.kind', StringEquals: 'run' },
        { Variable: '$.waitS', IsPresent: true },
      ],
      Next: STATE.retryWait,
    });
    expect(asl.States[STATE.retryWait]).toEqual({ Type: 'Wait', SecondsPath: '$.waitS', Next: STATE.checkRun });
    // After the wait the engine checks the run (a cancel during the wait stops the try), keeping the payload.
    expect(asl.States[STATE.checkRun]).toMatchObject({
      Type: 'Task',
      Resource: 'a',
      Parameters: { kind: 'check', 'runId.$': '$.runId', 'owner.$': '$.owner', 'seq.$': '$.seq' },
      ResultPath: '$.check',
      Next: STATE.retryRoute,
    });
    const go = { Variable: '$.check.kind', StringEquals: 'go' };
    expect(asl.States[STATE.retryRoute]).toMatchObject({
      Type: 'Choice',
      Choices: [
        { And: [go, { Variable: '$.node.type', StringEquals: 'http' }], Next: 'RunHttp' },
        { And: [go, { Variable: '$.node.type', StringEquals: 'shell' }], Next: 'RunShell' },
      ],
      Default: STATE.checkRefused,
    });
    expect(asl.States[STATE.checkRefused]).toEqual({ Type: 'Pass', InputPath: '$.check', Next: STATE.route });
  });
});
