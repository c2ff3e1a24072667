import { describe, expect, it } from 'vitest';
import { sequentialIds } from '../../functions/core/ids.ts';
import { childRunTrace, parseTraceparent, resumeRunTrace, startRunTrace, visitSpanId, visitTraceparent } from '../../functions/core/trace-context.ts';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('parseTraceparent', () => {
  it('reads the trace id, the parent span id and the sampled flag', () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({ traceId: TRACE, spanId: SPAN, sampled: true });
    expect(parseTraceparent(` 00-${TRACE}-${SPAN}-00 `)).toEqual({ traceId: TRACE, spanId: SPAN, sampled: false });
  });

  it('accepts fields a later version adds after the four it knows', () => {
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-03-later`)).toEqual({ traceId: TRACE, spanId: SPAN, sampled: true });
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['version 00 with an extra field', `00-${TRACE}-${SPAN}-01-x`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['an all-zero parent id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['a short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
  ])('ignores a header that is not one (%s), as the spec says: the run starts a trace of its own', (_why, header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });
});

describe('run traces', () => {
  it('gives a run no trace when nobody sent one and the host exports none', () => {
    expect(startRunTrace({ traced: false, now: 1 })).toBeUndefined();
  });

  it("joins the caller's trace under the caller's span, keeping its sampled flag", () => {
    const trace = startRunTrace({ caller: { traceId: TRACE, spanId: SPAN, sampled: false }, traced: false, now: 5, ids: sequentialIds() });
    expect(trace).toEqual({ traceId: TRACE, spanId: '0000000000000001', rootSpanId: '0000000000000001', since: 5, parentSpanId: SPAN, sampled: false });
  });

  it('starts a new trace for a host that exports traces', () => {
    const trace = startRunTrace({ traced: true, now: 5, ids: sequentialIds() });
    expect(trace?.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(trace?.parentSpanId).toBeUndefined();
    expect(trace?.sampled).toBe(true);
  });

  it('a resume opens a new stretch in the same trace, pointing at the one before and at its caller', () => {
    const ids = sequentialIds();
    const first = startRunTrace({ traced: true, now: 5, ids });
    const other = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), sampled: true };
    const resumed = resumeRunTrace(first, { until: 9, open: true }, { caller: other, traced: false, now: 20, ids });
    expect(resumed).toMatchObject({
      traceId: first?.traceId,
      rootSpanId: first?.rootSpanId,
      since: 20,
      caller: { traceId: other.traceId, spanId: other.spanId },
      previous: { spanId: first?.spanId, since: 5, until: 9, open: true },
    });
    expect(resumed?.spanId).not.toBe(first?.spanId);
    // The stretch after that forgets the caller of this one.
    expect(resumeRunTrace(resumed, { until: 30, open: false }, { traced: false, now: 40, ids })?.caller).toBeUndefined();
  });

  it("a child run is in its parent's trace, its first stretch under the workflow node's visit", () => {
    const parent = startRunTrace({ traced: true, now: 5, ids: sequentialIds() });
    if (!parent) throw new Error('no trace');
    const child = childRunTrace(parent, 'run-parent', 4, 7, sequentialIds());
    expect(child).toMatchObject({ traceId: parent.traceId, parentSpanId: visitSpanId('run-parent', 4), since: 7 });
  });

  it("names a visit's span the same wherever it is computed, and sends it on as the request's parent", () => {
    expect(visitSpanId('run-1', 3)).toBe(visitSpanId('run-1', 3));
    expect(visitSpanId('run-1', 3)).not.toBe(visitSpanId('run-1', 4));
    const trace = startRunTrace({ caller: { traceId: TRACE, spanId: SPAN, sampled: true }, traced: false, now: 1 });
    if (!trace) throw new Error('no trace');
    expect(visitTraceparent(trace, 'run-1', 3)).toBe(`00-${TRACE}-${visitSpanId('run-1', 3)}-01`);
  });
});
