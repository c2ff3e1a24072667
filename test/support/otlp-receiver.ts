// An OTLP/HTTP receiver on 127.0.0.1 (JSON encoding, as @opentelemetry/exporter-*-otlp-http sends it):
// records every span and metric data point it is sent, for tests that check what a real run exported.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

type AnyValue = { stringValue?: string; boolValue?: boolean; intValue?: number | string; doubleValue?: number; arrayValue?: { values?: AnyValue[] } };
type KeyValue = { key: string; value: AnyValue };

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** Milliseconds since the epoch. */
  start: number;
  end: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[];
  status: { code?: number; message?: string };
  resource: Record<string, unknown>;
}

export interface ReceivedPoint {
  metric: string;
  unit: string;
  attributes: Record<string, unknown>;
  /** A sum's value, or a histogram's count. */
  value: number;
  /** A histogram's sum. */
  sum?: number;
  /** When the series began (one per process that exported it). */
  since: string;
}

export interface OtlpReceiver {
  /** Pass as OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Every data point of every export, in order (cumulative sums: the last one of a series is its total). */
  readonly points: ReceivedPoint[];
  /** The paths requests came to (/v1/traces, /v1/metrics). */
  readonly paths: string[];
  close(): Promise<void>;
}

const anyValue = (v: AnyValue): unknown => {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(anyValue);
  return undefined;
};
const attributesOf = (list: KeyValue[] | undefined): Record<string, unknown> => Object.fromEntries((list ?? []).map((kv) => [kv.key, anyValue(kv.value)]));
const millis = (nanos: string | number | undefined): number => Number(BigInt(nanos ?? 0) / 1_000_000n);

type Json = Record<string, unknown>;

const takeSpans = (body: Json, into: ReceivedSpan[]): void => {
  for (const rs of (body.resourceSpans as Json[] | undefined) ?? []) {
    const resource = attributesOf((rs.resource as { attributes?: KeyValue[] } | undefined)?.attributes);
    for (const ss of (rs.scopeSpans as Json[] | undefined) ?? []) {
      for (const s of (ss.spans as Json[] | undefined) ?? []) {
        into.push({
          traceId: s.traceId as string,
          spanId: s.spanId as string,
          parentSpanId: (s.parentSpanId as string | undefined) || undefined,
          name: s.name as string,
          start: millis(s.startTimeUnixNano as string),
          end: millis(s.endTimeUnixNano as string),
          attributes: attributesOf(s.attributes as KeyValue[]),
          links: ((s.links as Json[] | undefined) ?? []).map((l) => ({
            traceId: l.traceId as string,
            spanId: l.spanId as string,
            attributes: attributesOf(l.attributes as KeyValue[]),
          })),
          status: (s.status as ReceivedSpan['status'] | undefined) ?? {},
          resource,
        });
      }
    }
  }
};

const takePoints = (body: Json, into: ReceivedPoint[]): void => {
  for (const rm of (body.resourceMetrics as Json[] | undefined) ?? []) {
    for (const sm of (rm.scopeMetrics as Json[] | undefined) ?? []) {
      for (const m of (sm.metrics as Json[] | undefined) ?? []) {
        const base = { metric: m.name as string, unit: (m.unit as string | undefined) ?? '' };
        const sum = m.sum as { dataPoints?: Json[] } | undefined;
        for (const p of sum?.dataPoints ?? []) {
          into.push({
            ...base,
            attributes: attributesOf(p.attributes as KeyValue[]),
            value: Number(p.asDouble ?? p.asInt ?? 0),
            since: String(p.startTimeUnixNano),
          });
        }
        const histogram = m.histogram as { dataPoints?: Json[] } | undefined;
        for (const p of histogram?.dataPoints ?? []) {
          into.push({
            ...base,
            attributes: attributesOf(p.attributes as KeyValue[]),
            value: Number(p.count ?? 0),
            sum: Number(p.sum ?? 0),
            since: String(p.startTimeUnixNano),
          });
        }
      }
    }
  }
};

export const startOtlpReceiver = async (): Promise<OtlpReceiver> => {
  const spans: ReceivedSpan[] = [];
  const points: ReceivedPoint[] = [];
  const paths: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const text = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
      paths.push(req.url ?? '');
      try {
        const body = JSON.parse(text) as Json;
        if (req.url === '/v1/traces') takeSpans(body, spans);
        else if (req.url === '/v1/metrics') takePoints(body, points);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"message":"not OTLP JSON"}');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    points,
    paths,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

/**
 * A metric's total for the points whose attributes include `match`: the last (cumulative) value of each
 * series, added over the processes that exported one.
 */
export const total = (points: readonly ReceivedPoint[], metric: string, match: Record<string, unknown> = {}): number => {
  const last = new Map<string, number>();
  for (const p of points) {
    if (p.metric !== metric || !Object.entries(match).every(([k, v]) => p.attributes[k] === v)) continue;
    last.set(`${p.since} ${JSON.stringify(p.attributes, Object.keys(p.attributes).sort())}`, p.value);
  }
  return [...last.values()].reduce((a, b) => a + b, 0);
};
