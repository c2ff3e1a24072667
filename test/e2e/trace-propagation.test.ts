// W3C Trace Context through the local host, in process: an http node, the items of a batch and a child
// run's http node all send the run's trace on (an HTTP server on 127.0.0.1 records the headers), each
// request a child of the visit that made it; the batch node's visit is observed once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryRunStore, type RunObservation, visitSpanId, WorkflowSchema } from '../../functions/core/index.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { type HttpTestServer, startHttpTestServer } from '../support/http-test-server.ts';

const CALLER = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
let server: HttpTestServer;
beforeAll(async () => {
  server = await startHttpTestServer();
});
afterAll(() => server.close());

const parentOf = (header: unknown): [string, string] => {
  const [, traceId = '', spanId = ''] = String(header).split('-');
  return [traceId, spanId];
};

describe('traceparent sent on by http nodes', () => {
  it("from a plain node, from each item of a batch (under the batch node) and from a child run, in the caller's trace", async () => {
    const seen: RunObservation[] = [];
    const host = new LocalHost({
      store: new MemoryRunStore(),
      validateDefinition: false,
      telemetry: { observer: { observe: (o) => void seen.push(...o) }, traced: false },
    });
    const workflow = WorkflowSchema.parse({
      nodes: [
        { id: 'one', type: 'http', params: { url: `${server.url}/echo?n=one` } },
        { id: 'many', type: 'http', params: { url: `${server.url}/echo?n=\${item}` }, batch: { items: ['a', 'b'] } },
        {
          id: 'nested',
          type: 'workflow',
          params: { workflow_ir: { nodes: [{ id: 'inner', type: 'http', params: { url: `${server.url}/echo?n=inner` } }] } },
        },
      ],
      edges: [
        { from: 'one', to: 'many' },
        { from: 'many', to: 'nested' },
      ],
    });
    const report = await host.start({ workflow, workflowName: 'propagated', params: {}, repairEnabled: false, maxRepairs: 0, traceparent: CALLER });
    expect(report.status, JSON.stringify(report.errors)).toBe('succeeded');
    const runId = report.run_id;
    const sent = (n: string) => parentOf(server.requests.find((r) => r.url === `/echo?n=${n}`)?.headers.traceparent);
    const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const seqOf = (nodeId: string) => report.steps.find((s) => s.node_id === nodeId)?.seq ?? -1;
    expect(sent('one')).toEqual([trace, visitSpanId(runId, seqOf('one'))]);
    expect(sent('a')).toEqual([trace, visitSpanId(runId, seqOf('many'))]);
    expect(sent('b')).toEqual([trace, visitSpanId(runId, seqOf('many'))]);
    // The child run is in the same trace; its request's parent is its own node's visit.
    const [innerTrace, innerParent] = sent('inner');
    expect(innerTrace).toBe(trace);
    const inner = seen.find((o) => o.kind === 'node_visited' && o.record.nodeId === 'inner');
    expect(inner?.kind === 'node_visited' && visitSpanId(inner.run.runId, inner.record.seq)).toBe(innerParent);
    expect(inner?.run.trace?.parentSpanId).toBe(visitSpanId(runId, seqOf('nested')));
    // The batch node's visit is told once, at its end.
    expect(seen.filter((o) => o.kind === 'node_visited' && o.record.nodeId === 'many').length).toBe(1);
  });

  it('sends nothing for a run without a trace (no caller, a host that exports none)', async () => {
    const host = new LocalHost({ store: new MemoryRunStore(), validateDefinition: false });
    const workflow = WorkflowSchema.parse({ nodes: [{ id: 'quiet', type: 'http', params: { url: `${server.url}/echo?n=quiet` } }] });
    await host.start({ workflow, workflowName: 'untraced', params: {}, repairEnabled: false, maxRepairs: 0 });
    expect(server.requests.find((r) => r.url === '/echo?n=quiet')?.headers.traceparent).toBeUndefined();
  });
});
