import { ConfigurationError } from '../../core/index.ts';
import * as z from '../../core/zod.ts';

const exporterList = (valid: readonly string[]) =>
  z.pipe(
    z.string(),
    z.transform((text, ctx) => {
      const names = text
        .split(',')
        .map((name) => name.trim().toLowerCase())
        .filter((name) => name !== '');
      for (const name of names) {
        if (!valid.includes(name))
          ctx.issues.push({ code: 'custom', input: text, message: `'${name}' is not an exporter flowmend has; use ${valid.join(', ')}` });
      }
      return names;
    }),
  );

/**
 * The OpenTelemetry variables flowmend reads (the standard ones; the exporters read the rest themselves:
 * OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION, OTEL_RESOURCE_ATTRIBUTES...).
 */
const telemetryEnvSchema = () =>
  z.object({
    OTEL_SDK_DISABLED: z.optional(z.string()),
    OTEL_EXPORTER_OTLP_ENDPOINT: z.optional(z.url({ protocol: /^https?$/ })),
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.optional(z.url({ protocol: /^https?$/ })),
    OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: z.optional(z.url({ protocol: /^https?$/ })),
    OTEL_TRACES_EXPORTER: z.optional(exporterList(['otlp', 'none'])),
    OTEL_METRICS_EXPORTER: z.optional(exporterList(['otlp', 'prometheus', 'none'])),
    OTEL_METRIC_EXPORT_INTERVAL: z.optional(z.coerce.number().check(z.int(), z.positive())),
    OTEL_BSP_SCHEDULE_DELAY: z.optional(z.coerce.number().check(z.int(), z.nonnegative())),
    OTEL_SERVICE_NAME: z.optional(z.string().check(z.minLength(1))),
  });
let built: ReturnType<typeof telemetryEnvSchema> | undefined;
const schema = () => {
  built ??= telemetryEnvSchema();
  return built;
};

/** What a host exports, decided from the environment without loading any SDK. */
export interface TelemetryConfig {
  /** Where spans go (OTLP/HTTP), if anywhere. */
  tracesUrl: string | undefined;
  /** Where metrics are pushed (OTLP/HTTP), if anywhere. */
  metricsUrl: string | undefined;
  prometheus: boolean;
  exportIntervalMs: number;
  /** How long spans wait to be exported in a batch. */
  spanDelayMs: number;
  serviceName: string;
}

export type TelemetryHost = 'cli' | 'serve' | 'lambda';

/**
 * OTLP goes out only to an endpoint someone named (OTEL_EXPORTER_OTLP_ENDPOINT or the per-signal one), as
 * `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` allow (both `otlp` by default); `serve` also keeps its
 * metrics for `GET /metrics` unless OTEL_METRICS_EXPORTER leaves `prometheus` out of a list that names
 * something else. Throws ConfigurationError naming the variable for a value it cannot use.
 */
export const telemetryConfigFrom = (env: Readonly<Record<string, string | undefined>>, host: TelemetryHost): TelemetryConfig => {
  // Most environments name no OTEL_ variable: nothing to parse (and no schema to build) on the CLI's path.
  const named = Object.keys(env).some((key) => key.startsWith('OTEL_'));
  const parsed = named ? schema().safeParse(env) : { success: true as const, data: {} as z.infer<ReturnType<typeof telemetryEnvSchema>> };
  if (!parsed.success) {
    throw new ConfigurationError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  }
  const e = parsed.data;
  const off = e.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true';
  const traceExporters = e.OTEL_TRACES_EXPORTER ?? ['otlp'];
  const metricExporters = e.OTEL_METRICS_EXPORTER ?? ['otlp'];
  const metricsNamed = e.OTEL_METRICS_EXPORTER !== undefined;
  // The spec's rule: a per-signal endpoint is used as given; the general one gets the signal's path appended.
  const signalUrl = (own: string | undefined, path: string): string | undefined =>
    own ?? (e.OTEL_EXPORTER_OTLP_ENDPOINT === undefined ? undefined : `${e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/${path}`);
  return {
    tracesUrl: !off && traceExporters.includes('otlp') ? signalUrl(e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, 'v1/traces') : undefined,
    metricsUrl: !off && metricExporters.includes('otlp') ? signalUrl(e.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, 'v1/metrics') : undefined,
    prometheus: !off && host === 'serve' && (!metricsNamed || metricExporters.includes('prometheus')),
    exportIntervalMs: e.OTEL_METRIC_EXPORT_INTERVAL ?? 60_000,
    spanDelayMs: e.OTEL_BSP_SCHEDULE_DELAY ?? 5_000,
    serviceName: e.OTEL_SERVICE_NAME ?? (host === 'lambda' ? 'flowmend-aws' : `flowmend-${host}`),
  };
};

/** Whether the config needs the OpenTelemetry SDK at all. */
export const exportsAnything = (config: TelemetryConfig): boolean => config.tracesUrl !== undefined || config.metricsUrl !== undefined || config.prometheus;
