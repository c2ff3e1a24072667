import { JSONPath } from 'jsonpath-plus';

/** What jsonpath-plus throws out of its constructor to hand back a scalar (its private `NewError`). */
type ScalarSignal = { avoidNew?: unknown; constructor?: unknown };

/** A plain base class: constructing it records the message and captures no stack trace. */
class ScalarCarrier {
  readonly message: string;
  constructor(message: string) {
    this.message = message;
  }
}

/**
 * jsonpath-plus returns a scalar from `JSONPath({ wrap: false })` by throwing an `Error` subclass
 * (`NewError`) out of its constructor and catching it one frame up. aws-local-stepfunctions reads every
 * Choice `Variable` that way, so each step on the local host built one Error, stack trace included, per
 * Choice rule it tried (about 20 for a `transform` node: Route tries the node types in order). Stack
 * capture was 0.1-0.2 ms of a step's ~1 ms (bench/engine-overhead, with and without
 * `Error.stackTraceLimit = 0`).
 *
 * This rebases `NewError` on a plain class: the throw, the catch and the value stay as the library wrote
 * them, only the stack capture goes. It touches nothing when the library no longer behaves as described
 * (a test pins the version's behaviour), and returns whether it applied. Idempotent.
 */
export const makeScalarReadsCheap = (): boolean => {
  let thrown: ScalarSignal | undefined;
  try {
    // Called with `new`, the constructor lets the scalar signal escape instead of catching it.
    new (JSONPath as unknown as new (options: object) => unknown)({ path: '$.a', json: { a: 1 }, wrap: false });
  } catch (error) {
    thrown = error as ScalarSignal;
  }
  const signal = thrown?.constructor;
  if (thrown?.avoidNew !== true || typeof signal !== 'function') return false;
  if (Object.getPrototypeOf(signal) === ScalarCarrier) return true;
  if (Object.getPrototypeOf(signal) !== Error) return false;
  Object.setPrototypeOf(signal, ScalarCarrier);
  Object.setPrototypeOf(signal.prototype, ScalarCarrier.prototype);
  return true;
};
