import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../functions/core/index.ts';
import { logThresholdFrom } from '../../../functions/hosts/telemetry/json-lines.ts';
import { exportsAnything, telemetryConfigFrom } from '../../../functions/hosts/telemetry/telemetry-config.ts';

describe('telemetryConfigFrom (the standard OTEL_* variables)', () => {
  it('exports nothing from the CLI when no endpoint is named: no SDK is loaded', () => {
    const config = telemetryConfigFrom({}, 'cli');
    expect(config).toMatchObject({ tracesUrl: undefined, metricsUrl: undefined, prometheus: false, serviceName: 'flowmend-cli' });
    expect(exportsAnything(config)).toBe(false);
  });

  it("appends each signal's path to OTEL_EXPORTER_OTLP_ENDPOINT, and takes a per-signal endpoint as it is", () => {
    expect(telemetryConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }, 'cli')).toMatchObject({
      tracesUrl: 'http://collector:4318/v1/traces',
      metricsUrl: 'http://collector:4318/v1/metrics',
    });
    expect(
      telemetryConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp' }, 'cli'),
    ).toMatchObject({ tracesUrl: 'https://traces.example/otlp', metricsUrl: 'http://collector:4318/v1/metrics' });
  });

  it('follows OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER and OTEL_SDK_DISABLED', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(telemetryConfigFrom({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }, 'cli').tracesUrl).toBeUndefined();
    expect(telemetryConfigFrom({ ...endpoint, OTEL_METRICS_EXPORTER: 'none' }, 'serve')).toMatchObject({ metricsUrl: undefined, prometheus: false });
    expect(telemetryConfigFrom({ ...endpoint, OTEL_METRICS_EXPORTER: 'prometheus' }, 'serve')).toMatchObject({ metricsUrl: undefined, prometheus: true });
    expect(exportsAnything(telemetryConfigFrom({ ...endpoint, OTEL_SDK_DISABLED: 'true' }, 'serve'))).toBe(false);
  });

  it("keeps serve's metrics for GET /metrics by default, and the CLI's never", () => {
    expect(telemetryConfigFrom({}, 'serve').prometheus).toBe(true);
    expect(telemetryConfigFrom({ OTEL_METRICS_EXPORTER: 'prometheus' }, 'cli').prometheus).toBe(false);
  });

  it('refuses a value it cannot use, naming the variable and what is valid', () => {
    expect(() => telemetryConfigFrom({ OTEL_TRACES_EXPORTER: 'zipkin' }, 'cli')).toThrow(
      new ConfigurationError("OTEL_TRACES_EXPORTER: 'zipkin' is not an exporter flowmend has; use otlp, none"),
    );
    expect(() => telemetryConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'cli')).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(() => logThresholdFrom({ FLOWMEND_LOG_LEVEL: 'loud' })).toThrow("FLOWMEND_LOG_LEVEL: 'loud' is not a level; use DEBUG, INFO, WARN, ERROR, SILENT");
    expect(logThresholdFrom({ FLOWMEND_LOG_LEVEL: 'warn' })).toBe('WARN');
  });
});
