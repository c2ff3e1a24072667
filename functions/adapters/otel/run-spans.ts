import { type Attributes, type Link, ROOT_CONTEXT, type SpanKind, SpanStatusCode, TraceFlags, type Tracer, trace } from '@opentelemetry/api';
import type { IdGenerator } from '@opentelemetry/sdk-trace';
import { RandomIdGenerator } from '@opentelemetry/sdk-trace';
import type { NodeRecord, Redactor, RunItem, RunObservation, RunObserver, RunTrace } from '../../core/index.ts';
import { visitSpanId } from '../../core/index.ts';

/** Longest error message put on a span (the store keeps the whole one). */
const MESSAGE_CHARS = 500;
/** How much of a cache key a span shows: enough to tell two visits apart. */
const CACHE_KEY_CHARS = 12;

/**
 * Ids the tracer takes for the next span when set, random ones otherwise. The spans of a run are made
 * after the fact, from what its writes recorded, with the ids its run item and the runners already use
 * (a stretch's span, a visit's span that an http node named as the parent of its request).
 */
export class PresetIds implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  nextTraceId: string | undefined;
  nextSpanId: string | undefined;

  generateTraceId(): string {
    const id = this.nextTraceId ?? this.random.generateTraceId();
    this.nextTraceId = undefined;
    return id;
  }
  generateSpanId(): string {
    const id = this.nextSpanId ?? this.random.generateSpanId();
    this.nextSpanId = undefined;
    return id;
  }
}

interface SpanSpec {
  name: string;
  trace: RunTrace;
  /** Under which span (of the run's trace); none for a run that began the trace. */
  parentSpanId: string | undefined;
  spanId?: string;
  start: number;
  end: number;
  attributes: Attributes;
  links?: Link[];
  kind?: SpanKind;
  error?: string | undefined;
}

const linkTo = (traceId: string, spanId: string, why: string): Link => ({
  context: { traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true },
  attributes: { 'flowmend.link': why },
});

/**
 * Turns what runs do into OpenTelemetry spans, in each run's own trace (its run item's `trace`): a span
 * per stretch of the run (from its start or a resume to where it stopped), under it a span per node
 * visit, per replayed node and per repair attempt. Nothing stays open while a run waits or is stopped;
 * a resumed stretch is a child of the first one and linked to the stretch before and to its caller.
 */
export class RunSpans implements RunObserver {
  constructor(
    private readonly tracer: Tracer,
    private readonly ids: PresetIds,
    private readonly redactor?: Redactor,
  ) {}

  observe(observations: readonly RunObservation[]): void {
    for (const o of observations) if (o.run.trace) this.one(o, o.run.trace);
  }

  private one(o: RunObservation, t: RunTrace): void {
    switch (o.kind) {
      case 'node_visited':
        this.visit(o.run, t, o.record, o.category);
        return;
      case 'nodes_replayed':
        for (const node of o.nodes) {
          this.emit({
            name: `node ${node.id}`,
            trace: t,
            parentSpanId: t.spanId,
            start: o.at,
            end: o.at,
            attributes: {
              ...this.runAttributes(o.run),
              'flowmend.node.id': node.id,
              'flowmend.node.seq': node.seq,
              'flowmend.node.replayed': true,
              ...(node.type ? { 'flowmend.node.type': node.type } : {}),
            },
            links: [linkTo(t.traceId, visitSpanId(o.run.runId, node.seq), 'recorded visit')],
          });
        }
        return;
      case 'repair_ended': {
        const a = o.attempt;
        this.emit({
          name: `repair ${a.attempt}`,
          trace: t,
          parentSpanId: t.spanId,
          start: a.startedAt ?? o.at,
          end: o.at,
          attributes: {
            ...this.runAttributes(o.run),
            'flowmend.repair.attempt': a.attempt,
            'flowmend.repair.outcome': a.outcome,
            'flowmend.repair.source': o.source,
            'flowmend.repair.nodes_changed': [...o.nodesChanged],
            ...(a.nodeId ? { 'flowmend.node.id': a.nodeId } : {}),
            ...(a.version === undefined ? {} : { 'flowmend.workflow.version': a.version }),
            ...(a.usage ? usageAttributes(a.usage) : {}),
          },
          error: a.outcome === 'applied' ? undefined : a.reason,
        });
        return;
      }
      case 'execution_continued':
        this.emit({
          name: 'continue as new execution',
          trace: t,
          parentSpanId: t.spanId,
          start: o.at,
          end: o.at,
          attributes: { ...this.runAttributes(o.run), ...(o.nodeId ? { 'flowmend.node.id': o.nodeId } : {}) },
        });
        return;
      case 'run_resumed':
        // The stretch before ended with its process (the run was still `running`): it ends now, as far as it got.
        if (t.previous?.open) this.stretch(o.run, { ...t, spanId: t.previous.spanId, since: t.previous.since }, t.previous.until, 'running', undefined, true);
        return;
      case 'run_stopped':
        this.stretch(o.run, t, o.at, o.status, o.error?.message);
        return;
      case 'engine_step':
        this.emit({
          name: 'engine step',
          trace: t,
          parentSpanId: t.spanId,
          start: o.startedAt,
          end: o.at,
          attributes: { ...this.runAttributes(o.run), 'flowmend.engine.replayed': o.replayed },
        });
        return;
      case 'node_retrying':
        // The wait before the next try: the state machine's Wait state, whole seconds, as the engine asked it.
        if (o.waitS > 0)
          this.emit({
            name: `wait ${o.nodeId}`,
            trace: t,
            parentSpanId: t.spanId,
            start: o.at,
            end: o.at + Math.ceil(o.waitS) * 1000,
            attributes: {
              ...this.runAttributes(o.run),
              'flowmend.node.id': o.nodeId,
              'flowmend.wait.reason': 'retry',
              'flowmend.wait.seconds': Math.ceil(o.waitS),
              'flowmend.node.attempt': o.attempt + 1,
            },
          });
        return;
      case 'run_created':
      case 'run_started':
      case 'repair_started':
        return;
    }
  }

  private runAttributes(run: RunItem): Attributes {
    return { 'flowmend.run.id': run.runId, 'flowmend.workflow.name': run.workflowName };
  }

  private stretch(run: RunItem, t: RunTrace, end: number, status: string, error: string | undefined, cutOff = false): void {
    const first = t.spanId === t.rootSpanId;
    const links: Link[] = [];
    if (!first && t.previous && !cutOff) links.push(linkTo(t.traceId, t.previous.spanId, 'previous stretch'));
    if (!first && t.caller && !cutOff) links.push(linkTo(t.caller.traceId, t.caller.spanId, 'resumed by'));
    this.emit({
      name: `${first ? 'run' : 'resume'} ${run.workflowName}`,
      trace: t,
      parentSpanId: first ? t.parentSpanId : t.rootSpanId,
      spanId: t.spanId,
      start: t.since,
      end,
      attributes: {
        ...this.runAttributes(run),
        'flowmend.run.status': status,
        ...(cutOff ? { 'flowmend.run.cut_off': true } : {}),
        ...(run.parent ? { 'flowmend.run.parent_id': run.parent.runId } : {}),
      },
      links,
      error: status === 'failed' || status === 'interrupted' ? (error ?? status) : undefined,
    });
  }

  private visit(run: RunItem, t: RunTrace, r: NodeRecord, category: string | undefined): void {
    this.emit({
      name: `node ${r.nodeId}`,
      trace: t,
      parentSpanId: t.spanId,
      spanId: visitSpanId(run.runId, r.seq),
      start: r.startedAt,
      end: r.finishedAt ?? r.startedAt + (r.durationMs ?? 0),
      attributes: {
        ...this.runAttributes(run),
        'flowmend.node.id': r.nodeId,
        'flowmend.node.type': r.nodeType,
        'flowmend.node.visit': r.visit,
        'flowmend.node.seq': r.seq,
        'flowmend.node.status': r.status,
        'flowmend.node.replayed': false,
        ...(r.action ? { 'flowmend.node.action': r.action } : {}),
        ...(r.cacheKey ? { 'flowmend.node.cache_key': r.cacheKey.slice(0, CACHE_KEY_CHARS) } : {}),
        ...(r.repaired ? { 'flowmend.node.repaired': true } : {}),
        ...(r.interrupted ? { 'flowmend.node.interrupted': true } : {}),
        ...(r.attempt === undefined ? {} : { 'flowmend.node.attempt': r.attempt }),
        ...(r.iteration === undefined ? {} : { 'flowmend.node.iteration': r.iteration }),
        ...(r.error ? { 'error.type': r.error.code } : {}),
        ...(category ? { 'flowmend.error.category': category } : {}),
        ...(r.usage ? usageAttributes(r.usage) : {}),
      },
      error: r.status === 'failed' || r.status === 'interrupted' ? (r.error?.message ?? r.status) : undefined,
    });
  }

  private emit(spec: SpanSpec): void {
    const { trace: t } = spec;
    const flags = t.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE;
    const parent =
      spec.parentSpanId === undefined
        ? ROOT_CONTEXT
        : trace.setSpanContext(ROOT_CONTEXT, { traceId: t.traceId, spanId: spec.parentSpanId, traceFlags: flags, isRemote: true });
    // A span without a parent starts the run's trace: its trace id is the run's.
    this.ids.nextTraceId = spec.parentSpanId === undefined ? t.traceId : undefined;
    this.ids.nextSpanId = spec.spanId;
    const span = this.tracer.startSpan(
      spec.name,
      {
        startTime: spec.start,
        attributes: spec.attributes,
        ...(spec.links ? { links: spec.links } : {}),
        ...(spec.kind === undefined ? {} : { kind: spec.kind }),
      },
      parent,
    );
    // A span the SDK did not take (tracing suppressed) left the presets: they must not name the next one.
    this.ids.nextTraceId = undefined;
    this.ids.nextSpanId = undefined;
    if (spec.error !== undefined) {
      const message = spec.error.slice(0, MESSAGE_CHARS);
      span.setStatus({ code: SpanStatusCode.ERROR, message: this.redactor ? this.redactor.text(message) : message });
    }
    span.end(Math.max(spec.end, spec.start));
  }
}

const usageAttributes = (usage: { model: string; input_tokens: number; output_tokens: number; cost_usd: number }): Attributes => ({
  'gen_ai.request.model': usage.model,
  'gen_ai.usage.input_tokens': usage.input_tokens,
  'gen_ai.usage.output_tokens': usage.output_tokens,
  'flowmend.llm.cost_usd': usage.cost_usd,
});
