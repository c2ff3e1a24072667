import { builtOnFirstUse } from '../lazy-schema.ts';
import * as z from '../zod.ts';

/**
 * How a wait was answered. `due`: its time came; `event`: a callback delivered its payload; `timeout`:
 * no event came in time; `approved` / `denied`: a person answered a gate or a held repair; `granted`: a
 * concurrency slot was handed to the run (flow/flow-step.ts).
 */
export const WaitOutcomeSchema = builtOnFirstUse(() => z.enum(['due', 'event', 'timeout', 'approved', 'denied', 'granted']));
export type WaitOutcome = z.infer<typeof WaitOutcomeSchema>;

/** The answer the next execution continues with (waits/continue-wait.ts); the first answer of a wait is the only one. */
export const WaitAnswerSchema = builtOnFirstUse(() =>
  z.object({
    outcome: WaitOutcomeSchema,
    at: z.number(),
    /** What a callback delivered (an event), as JSON. */
    payload: z.optional(z.unknown()),
    /** A person's note with an approval or a denial. */
    comment: z.optional(z.string()),
    /** Who answered, as the host knows it (a user name, `api`, `viewer`). */
    by: z.optional(z.string()),
  }),
);
export type WaitAnswer = z.infer<typeof WaitAnswerSchema>;

/** What a run waits for: the `kind` of its wait. */
export const WaitKindSchema = builtOnFirstUse(() => z.enum(['time', 'event', 'approval', 'repair-approval', 'slot', 'rate', 'debounce']));

/** Fields of every kind of wait. A kind is added (issue 32: a concurrency slot, a rate limit) as one more member. */
const common = () => ({
  /** Names this wait: a wake-up or an answer meant for another wait of the run does nothing. */
  id: z.string(),
  since: z.number(),
  /** When the wait is due (time), or when it times out (an event). */
  until: z.optional(z.number()),
  answer: z.optional(WaitAnswerSchema),
});

/**
 * What a `waiting` run waits for (DESIGN 7b), in its run item: a time (the wait node), an event (the
 * wait-for-event node, which holds its callback token's hash, never the token), a person's approval of a
 * gated node (with the node's resolved params, bounded and redacted) or of a repair the engine holds.
 */
export const WaitSchema = builtOnFirstUse(() =>
  z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('time'), ...common(), nodeId: z.string(), until: z.number() }),
    z.object({ kind: z.literal('event'), ...common(), nodeId: z.string(), tokenHash: z.string() }),
    z.object({
      kind: z.literal('approval'),
      ...common(),
      nodeId: z.string(),
      nodeType: z.string(),
      preview: z.record(z.string(), z.unknown()),
      /** The loop iteration the gate holds (a gated node with `loop` asks before each one). */
      iteration: z.optional(z.int().check(z.positive())),
    }),
    z.object({
      kind: z.literal('repair-approval'),
      ...common(),
      nodeId: z.optional(z.string()),
      /** The workflow version the repair wrote and the run has not adopted. */
      version: z.int().check(z.positive()),
      attempt: z.int().check(z.positive()),
    }),
    // Flow control (docs/flow-control.md): a concurrency slot, a rate limit's start time, a debounced start.
    z.object({
      kind: z.literal('slot'),
      ...common(),
      /** The key as the workflow resolved it, and whether the run (`run`) or one of its nodes waits for it. */
      key: z.string(),
      /** The key as the flow store names it (flow/flow-config.ts `flowKey`): a cancel takes the run out of its queue. */
      storeKey: z.string(),
      scope: z.enum(['run', 'node']),
      nodeId: z.optional(z.string()),
      limit: z.int(),
      /** Place in the queue when the run paused (1: next), and how many held the key then. */
      position: z.int(),
      holders: z.int(),
      iteration: z.optional(z.int().check(z.positive())),
      /** A retry's next try that waits for the slot: it goes on as that try, not as a new visit. */
      retry: z.optional(z.object({ visit: z.int(), attempt: z.int(), waitS: z.optional(z.int()) })),
    }),
    z.object({
      kind: z.literal('rate'),
      ...common(),
      key: z.string(),
      nodeId: z.string(),
      /** The start time the node reserved in the key's window: it runs then, without reserving again. */
      until: z.number(),
      iteration: z.optional(z.int().check(z.positive())),
    }),
    z.object({
      kind: z.literal('debounce'),
      ...common(),
      /** Never set: every kind has the field, so that code reading `wait.nodeId` reads it alike. */
      nodeId: z.optional(z.string()),
      key: z.string(),
      until: z.number(),
      starts: z.int().check(z.positive()),
    }),
  ]),
);
export type Wait = z.infer<typeof WaitSchema>;
export type WaitKind = z.infer<typeof WaitKindSchema>;

/** What each kind of wait accepts as an answer. */
export const ANSWERS: Readonly<Record<WaitKind, readonly WaitOutcome[]>> = {
  time: ['due'],
  event: ['event', 'timeout'],
  approval: ['approved', 'denied'],
  'repair-approval': ['approved', 'denied'],
  slot: ['due', 'granted'],
  rate: ['due'],
  debounce: ['due'],
};

const ordinal = (n: number): string => `${n}${n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th')}`;

/** What a person reads about a wait: what it waits for, in a few words. */
export const describeWait = (wait: Wait): string => {
  switch (wait.kind) {
    case 'time':
      return `'${wait.nodeId}' waits until ${new Date(wait.until).toISOString()}`;
    case 'event':
      return `'${wait.nodeId}' waits for an event${wait.until === undefined ? '' : ` until ${new Date(wait.until).toISOString()}`}`;
    case 'approval':
      return `'${wait.nodeId}' waits for approval before it runs`;
    case 'repair-approval':
      return `a repair (workflow version ${wait.version}) waits for approval before it is applied`;
    case 'slot':
      return `${wait.scope === 'run' ? 'the run' : `'${wait.nodeId}'`} waits for a concurrency slot of '${wait.key}' (limit ${wait.limit}, ${wait.holders} holding, ${ordinal(wait.position)} in line)`;
    case 'rate':
      return `'${wait.nodeId}' waits for the rate limit of '${wait.key}' until ${new Date(wait.until).toISOString()}`;
    case 'debounce':
      return `the start waits out the debounce of '${wait.key}' until ${new Date(wait.until).toISOString()} (${wait.starts} start${wait.starts === 1 ? '' : 's'} so far)`;
  }
};

/** The key a wait of flow control waits on, and where the run stands (a slot's queue), for the report, the API's list and the viewer. */
export interface WaitFlow {
  key: string;
  scope?: 'run' | 'node';
  limit?: number;
  position?: number;
  holders?: number;
  starts?: number;
}
export const flowOfWait = (wait: Wait): WaitFlow | undefined => {
  switch (wait.kind) {
    case 'slot':
      return { key: wait.key, scope: wait.scope, limit: wait.limit, position: wait.position, holders: wait.holders };
    case 'rate':
      return { key: wait.key };
    case 'debounce':
      return { key: wait.key, starts: wait.starts };
    default:
      return undefined;
  }
};

/** `{ flow }` for a wait of flow control, else nothing: spread into what a wait shows. */
export const withFlow = (wait: Wait): { flow?: WaitFlow } => {
  const flow = flowOfWait(wait);
  return flow ? { flow } : {};
};

/**
 * When a waiting run should be continued: at its answer (an answered wait nobody took yet is due at
 * once), else at its deadline; undefined for a wait that only an answer ends.
 */
export const wakeAt = (wait: Wait): number | undefined => wait.answer?.at ?? wait.until;
