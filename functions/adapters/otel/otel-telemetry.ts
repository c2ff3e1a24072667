import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, type MetricReader, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { Redactor, RunObservation, RunObserver } from '../../core/index.ts';
import { RunInstruments } from './run-instruments.ts';
import { PresetIds, RunSpans } from './run-spans.ts';

/** The instrumentation scope of flowmend's spans and metrics. */
const SCOPE = 'flowmend';

export interface OtelOptions {
  /** `service.name` unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES names another. */
  serviceName: string;
  /** Where spans go over OTLP/HTTP, if anywhere (the exporter reads the other OTEL_EXPORTER_OTLP_* variables: headers, timeout). */
  tracesUrl: string | undefined;
  /** Where metrics are pushed over OTLP/HTTP every `exportIntervalMs`, if anywhere. */
  metricsUrl: string | undefined;
  /** Keep metrics for a Prometheus scrape (`prometheusText`). */
  prometheus: boolean;
  exportIntervalMs: number;
  /** How long spans wait to be exported in a batch. */
  spanDelayMs: number;
  /** Error messages on spans go through it (the store's redaction). */
  redactor?: Redactor | undefined;
}

export interface OtelTelemetry {
  observer: RunObserver;
  /** The metrics as Prometheus text (version 0.0.4), when `prometheus` was asked for. */
  prometheusText?: () => Promise<string>;
  /** Exports what is pending (the end of a CLI run, of a Lambda invocation). */
  flush(): Promise<void>;
  /** Flushes, then stops the exporters. */
  shutdown(): Promise<void>;
}

/**
 * The OpenTelemetry SDK for runs: a TracerProvider (batched OTLP/HTTP export) whose spans RunSpans makes
 * from observations, and a MeterProvider with the run instruments, read by a periodic OTLP/HTTP export
 * and/or a Prometheus reader. Loaded only by a host that was configured to export (hosts/telemetry). The
 * OTLP exporters load only when an endpoint is set: serve's GET /metrics alone (Prometheus) spent ~130 ms
 * of CPU loading the OTLP metric exporter's modules, while the first runs came in.
 */
export const startOtel = async (options: OtelOptions): Promise<OtelTelemetry> => {
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': options.serviceName }))
    .merge(detectResources({ detectors: [envDetector] }));
  const observers: RunObserver[] = [];
  const closers: { forceFlush(): Promise<void>; shutdown(): Promise<void> }[] = [];
  if (options.tracesUrl !== undefined) {
    const ids = new PresetIds();
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    const exporter = new OTLPTraceExporter({ url: options.tracesUrl });
    const provider = new TracerProvider({
      resource,
      idGenerator: ids,
      spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: options.spanDelayMs })],
    });
    observers.push(new RunSpans(provider.getTracer(SCOPE), ids, options.redactor));
    closers.push(provider);
  }
  let prometheus: PrometheusExporter | undefined;
  if (options.metricsUrl !== undefined || options.prometheus) {
    const readers: MetricReader[] = [];
    if (options.metricsUrl !== undefined) {
      const { OTLPMetricExporter } = await import('@opentelemetry/exporter-metrics-otlp-http');
      const exporter = new OTLPMetricExporter({ url: options.metricsUrl });
      readers.push(new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: options.exportIntervalMs }));
    }
    if (options.prometheus) {
      // serve answers the scrape itself (GET /metrics); one scope, so no otel_scope_name label on every series.
      prometheus = new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true });
      readers.push(prometheus);
    }
    const provider = new MeterProvider({ resource, readers });
    observers.push(new RunInstruments(provider.getMeter(SCOPE)));
    closers.push(provider);
  }
  const serializer = new PrometheusSerializer('', false, undefined, false, true);
  const reader = prometheus;
  return {
    observer: {
      observe: (observations: readonly RunObservation[]) => {
        for (const observer of observers) observer.observe(observations);
      },
    },
    ...(reader
      ? {
          prometheusText: async () => {
            const { resourceMetrics } = await reader.collect();
            return serializer.serialize(resourceMetrics);
          },
        }
      : {}),
    flush: async () => {
      await Promise.all(closers.map((c) => c.forceFlush()));
    },
    shutdown: async () => {
      await Promise.all(closers.map((c) => c.shutdown()));
    },
  };
};
