import aslValidator from 'asl-validator';
import { describe, expect, it } from 'vitest';
import {
  batchStateName,
  buildDefinition,
  itemRunnerStateName,
  itemWaitChoiceName,
  itemWaitStateName,
  recordItemStateName,
  runnerStateName,
  STATE,
} from '../../functions/core/definition.ts';
import { retryWaitS, THROTTLE_RETRY } from '../../functions/core/retry-policy.ts';
import { AdvanceOutcomeSchema } from '../../functions/core/state-io.ts';
import { RUNNER_TIMEOUTS } from '../../infra/flowmend-stack.ts';
import { extractStateMachines, fakeArn } from '../support/cfn-asl.ts';
import { synthFlowmend } from '../support/synth-flowmend.ts';
import { asCfn, logicalId } from './stack-helpers.ts';

type State = Record<string, unknown> & { Type: string; Next?: string };
type Asl = { StartAt: string; States: Record<string, State> };
type ChoiceRule = { Variable?: string; StringEquals?: string; IsPresent?: boolean; And?: ChoiceRule[]; Next?: string };

const cfn = asCfn(synthFlowmend().template);
const machines = extractStateMachines(cfn);
const fnArn = (prefix: string) => fakeArn(cfn, logicalId(cfn, 'AWS::Lambda::Function', prefix));
const RUNNER_TYPES = Object.keys(RUNNER_TIMEOUTS);

const expected = buildDefinition({
  advance: fnArn('Advance'),
  repair: fnArn('Repair'),
  continueRun: 'arn:aws:states:::states:startExecution',
  interrupted: fnArn('MarkInterrupted'),
  timeoutsS: {
    advance: 90,
    repair: 180,
    interrupted: 60,
    runners: Object.fromEntries(Object.entries(RUNNER_TIMEOUTS).map(([type, timeout]) => [type, timeout.toSeconds() + 30])),
  },
  runners: Object.fromEntries(RUNNER_TYPES.map((type) => [type, fnArn(`Run${type[0]?.toUpperCase()}${type.slice(1)}`)])),
});

/** Where the Route state sends an outcome: follows the Choice rules the way Step Functions does. */
function routeOf(asl: Asl, outcome: { kind: string; node?: { type: string }; nodeType?: string }): string | undefined {
  const route = asl.States[STATE.route] as State & { Choices: ChoiceRule[]; Default?: string };
  const read = (path: string): unknown =>
    path
      .replace(/^\$\./, '')
      .split('.')
      .reduce<unknown>((v, key) => (v as Record<string, unknown> | undefined)?.[key], outcome);
  const matches = (rule: ChoiceRule): boolean => {
    if (rule.And !== undefined) return rule.And.every(matches);
    const value = read(rule.Variable ?? '');
    return rule.IsPresent !== undefined ? (value !== undefined) === rule.IsPresent : value === rule.StringEquals;
  };
  return route.Choices.find(matches)?.Next ?? route.Default;
}

describe.each(Object.keys(machines))('state machine %s in the synthesized template', (id) => {
  const asl = machines[id] as unknown as Asl;

  it('is exactly what buildDefinition returns, Lambda ARNs substituted', () => {
    expect(asl).toEqual(expected);
  });

  it('is valid ASL', () => {
    const result = aslValidator(structuredClone(asl));
    expect(result.isValid, result.errorsText()).toBe(true);
  });

  it('has a branch for every outcome kind, and one runner Task per node type', () => {
    const kinds = AdvanceOutcomeSchema.unwrap().def.options.map((option) => option.shape.kind.def.values[0]);
    expect(kinds.sort()).toEqual(['batch', 'continue', 'done', 'failed', 'idle', 'repair', 'run', 'waiting']);
    const targets: Record<string, [string, string]> = {
      repair: [STATE.repair, 'Task'],
      continue: [STATE.continueRun, 'Task'],
      done: [STATE.done, 'Succeed'],
      failed: [STATE.failed, 'Fail'],
      // A waiting run's execution ends: nothing is billed by the wait's length (DESIGN 7b).
      waiting: [STATE.waiting, 'Succeed'],
      idle: [STATE.idle, 'Succeed'],
    };
    for (const [kind, [name, type]] of Object.entries(targets)) {
      expect(routeOf(asl, { kind }), kind).toBe(name);
      expect(asl.States[name]?.Type).toBe(type);
    }
    for (const type of RUNNER_TYPES) {
      const target = routeOf(asl, { kind: 'run', node: { type } });
      expect(target).toBe(runnerStateName(type));
      expect(asl.States[target ?? '']).toMatchObject({ Type: 'Task', Resource: expected.States[target ?? '']?.Resource, Next: STATE.advance });
    }
    for (const type of RUNNER_TYPES) {
      // A batch chunk goes to its type's Map: each item on the type's runner (same Retry), then RecordItem on the engine Lambda.
      const target = routeOf(asl, { kind: 'batch', nodeType: type }) ?? '';
      expect(target).toBe(batchStateName(type));
      const map = asl.States[target] as State & { Iterator: { StartAt: string; States: Record<string, State & { Retry?: unknown; Catch?: unknown }> } };
      expect(map).toMatchObject({ Type: 'Map', ItemsPath: '$.items', MaxConcurrencyPath: '$.width', Next: STATE.advance });
      const item = map.Iterator.States[itemRunnerStateName(type)];
      // A retried item (retry_wait) passes a Choice and a Wait on `$.waitS` first; the others go straight to the runner.
      expect(map.Iterator.StartAt).toBe(itemWaitChoiceName(type));
      expect(map.Iterator.States[itemWaitChoiceName(type)]).toMatchObject({
        Type: 'Choice',
        Choices: [{ Variable: '$.waitS', IsPresent: true, Next: itemWaitStateName(type) }],
        Default: itemRunnerStateName(type),
      });
      expect(map.Iterator.States[itemWaitStateName(type)]).toMatchObject({ Type: 'Wait', SecondsPath: '$.waitS', Next: itemRunnerStateName(type) });
      expect(item).toMatchObject({ Type: 'Task', Resource: expected.States[runnerStateName(type)]?.Resource, Next: recordItemStateName(type) });
      expect(item?.Retry).toEqual(asl.States[runnerStateName(type)]?.Retry);
      expect(map.Iterator.States[recordItemStateName(type)]).toMatchObject({ Type: 'Task', Resource: expected.States[STATE.advance]?.Resource, End: true });
    }
    expect(routeOf(asl, { kind: 'run', node: { type: 'no-such-type' } })).toBe(STATE.unknown);
    expect(asl.States[STATE.unknown]?.Type).toBe('Fail');
  });

  it('retries TransientError in every runner Task and catches everything else back to Advance', () => {
    for (const type of RUNNER_TYPES) {
      const task = asl.States[runnerStateName(type)] as State & { Retry: { ErrorEquals: string[]; MaxAttempts: number }[]; Catch: unknown[] };
      const transient = task.Retry.find((r) => r.ErrorEquals.includes('TransientError'));
      expect(transient?.MaxAttempts, type).toBeGreaterThan(0);
      expect(task.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: STATE.advance }]);
    }
  });

  it('retries a throttled Lambda on every Lambda Task for about half a minute, each wait jittered, apart from the other service errors', () => {
    const lambdaTasks = Object.values(asl.States).filter((state) => state.Type === 'Task' && String(state.Resource).includes(':function:'));
    expect(lambdaTasks.length).toBeGreaterThan(RUNNER_TYPES.length);
    for (const task of lambdaTasks as (State & { Retry: { ErrorEquals: string[]; MaxDelaySeconds?: number; JitterStrategy?: string }[] })[]) {
      const throttled = task.Retry.filter((r) => r.ErrorEquals.includes('Lambda.TooManyRequestsException'));
      expect(throttled).toHaveLength(1);
      expect(throttled[0]).toMatchObject({ ErrorEquals: ['Lambda.TooManyRequestsException'], JitterStrategy: 'FULL', MaxDelaySeconds: 16 });
    }
    expect(retryWaitS(THROTTLE_RETRY)).toBe(31);
  });

  it('continues a run by starting the same state machine', () => {
    expect(asl.States[STATE.continueRun]).toMatchObject({
      Resource: 'arn:aws:states:::states:startExecution',
      Parameters: { 'StateMachineArn.$': '$$.StateMachine.Id' },
    });
  });
});
