import { cryptoIds, type Ids } from './ids.ts';
import { builtOnFirstUse } from './lazy-schema.ts';
import { visitSpanId } from './span-id.ts';
import * as z from './zod.ts';

export { visitSpanId } from './span-id.ts';

const traceIdField = () => z.string().check(z.regex(/^[0-9a-f]{32}$/, 'a trace id is 32 lowercase hex digits'));
const spanIdField = () => z.string().check(z.regex(/^[0-9a-f]{16}$/, 'a span id is 16 lowercase hex digits'));

/** A span of another trace (or of this one) that a run's span is linked to. */
export const SpanRefSchema = builtOnFirstUse(() => z.object({ traceId: traceIdField(), spanId: spanIdField() }));
export type SpanRef = z.infer<typeof SpanRefSchema>;

/**
 * A run's place in a distributed trace (W3C Trace Context), kept in the run item so that every execution
 * and every resume, on any host, puts its spans in the same trace. No span stays open while a run waits
 * or is stopped: the run is told as *stretches*, each from its start (or a resume) to where it stopped,
 * each a span of its own, ended when the stretch ends; node visits are children of the stretch they ran in.
 */
export const RunTraceSchema = builtOnFirstUse(() =>
  z.object({
    traceId: traceIdField(),
    /** The current stretch's span. */
    spanId: spanIdField(),
    /** When the current stretch began. */
    since: z.number(),
    /** The first stretch's span: later stretches are its children. */
    rootSpanId: spanIdField(),
    /** The span of the request (or parent run's node) that started the run: the first stretch's parent. */
    parentSpanId: z.optional(spanIdField()),
    /** The request that resumed the run, when it came with a trace of its own. */
    caller: z.optional(SpanRefSchema),
    /** The stretch before this one; `open` when it never ended (its process died), so the resumer ends it. */
    previous: z.optional(z.object({ spanId: spanIdField(), since: z.number(), until: z.number(), open: z.boolean() })),
    /** The trace's sampled flag, as the caller set it (true when the run began the trace). */
    sampled: z.boolean(),
  }),
);
export type RunTrace = z.infer<typeof RunTraceSchema>;

/** What a `traceparent` header carries. */
export interface TraceParent {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZEROS = /^0+$/;

/**
 * Reads a W3C `traceparent` header (`00-<trace id>-<parent id>-<flags>`); undefined when it is absent
 * or not one (the spec says to start a new trace then, not to fail the request).
 */
export const parseTraceparent = (header: string | undefined): TraceParent | undefined => {
  const match = header === undefined ? null : TRACEPARENT.exec(header.trim());
  if (!match) return undefined;
  const [, version, traceId = '', spanId = '', flags = '00', rest] = match;
  // Version ff is forbidden; version 00 has exactly four fields. A later version may add fields after them.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (ZEROS.test(traceId) || ZEROS.test(spanId)) return undefined;
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
};

export const formatTraceparent = (traceId: string, spanId: string, sampled: boolean): string => `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;

/** The `traceparent` a node visit's outgoing requests carry: the visit's own span as their parent. */
export const visitTraceparent = (trace: RunTrace, runId: string, seq: number): string =>
  formatTraceparent(trace.traceId, visitSpanId(runId, seq), trace.sampled);

export interface TraceStart {
  /** The traceparent of the request that started the run, if it had one. */
  caller?: TraceParent | undefined;
  /** Whether this host exports traces: without a caller's trace, a run gets one only then. */
  traced: boolean;
  now: number;
  ids?: Ids;
}

/** A new run's trace: the caller's trace when it sent one, a new one when this host traces, else none. */
export const startRunTrace = ({ caller, traced, now, ids = cryptoIds }: TraceStart): RunTrace | undefined => {
  if (!caller && !traced) return undefined;
  const spanId = ids.hex(8);
  return {
    traceId: caller?.traceId ?? ids.hex(16),
    spanId,
    since: now,
    rootSpanId: spanId,
    ...(caller ? { parentSpanId: caller.spanId } : {}),
    sampled: caller?.sampled ?? true,
  };
};

/** A child run's trace: the parent's trace, its first stretch a child of the workflow node's visit. */
export const childRunTrace = (parent: RunTrace, parentRunId: string, seq: number, now: number, ids: Ids = cryptoIds): RunTrace => {
  const spanId = ids.hex(8);
  return { traceId: parent.traceId, spanId, since: now, rootSpanId: spanId, parentSpanId: visitSpanId(parentRunId, seq), sampled: parent.sampled };
};

/**
 * The next stretch of a run being resumed (or taken over): a new span in the run's trace, linked to the
 * one before. `until` is when the previous stretch was last written; `open` when it never ended.
 */
export const resumeRunTrace = (trace: RunTrace | undefined, previous: { until: number; open: boolean }, start: TraceStart): RunTrace | undefined => {
  if (!trace) return startRunTrace(start);
  const { caller, now, ids = cryptoIds } = start;
  const { caller: _before, previous: _earlier, ...kept } = trace;
  return {
    ...kept,
    spanId: ids.hex(8),
    since: now,
    ...(caller ? { caller: { traceId: caller.traceId, spanId: caller.spanId } } : {}),
    previous: { spanId: trace.spanId, since: trace.since, until: previous.until, open: previous.open },
  };
};
