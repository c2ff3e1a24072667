// What the stack gives a team to watch runs with: JSON log lines at a level a prop sets, EMF metrics in
// a namespace the dashboard reads, and an OTLP endpoint for spans when one is named.
import { describe, expect, it } from 'vitest';
import { RUN_METRICS } from '../../functions/adapters/run-metric-points.ts';
import { synthFlowmend } from '../support/synth-flowmend.ts';
import { asCfn, logicalId } from './stack-helpers.ts';

const { template } = synthFlowmend();
const cfn = asCfn(template);
const fn = (prefix: string) => cfn.Resources[logicalId(cfn, 'AWS::Lambda::Function', prefix)]?.Properties ?? {};
const envOf = (prefix: string) => ((fn(prefix).Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {}) as Record<string, unknown>;
const WRITERS = ['Advance', 'Repair', 'MarkInterrupted', 'StartRun', 'ScheduledStart', 'Api'];

describe('FlowmendStack observability', () => {
  it('makes every function log JSON, at INFO by default and at the level functionLogLevel sets', () => {
    for (const name of [...WRITERS, 'RunShell', 'RunHttp']) {
      expect(fn(name).LoggingConfig, name).toMatchObject({ LogFormat: 'JSON', ApplicationLogLevel: 'INFO', SystemLogLevel: 'INFO' });
    }
    const quiet = asCfn(synthFlowmend({ functionLogLevel: 'WARN' }).template);
    const props = (prefix: string) => quiet.Resources[logicalId(quiet, 'AWS::Lambda::Function', prefix)]?.Properties ?? {};
    expect(props('RunShell').LoggingConfig).toMatchObject({ LogFormat: 'JSON', ApplicationLogLevel: 'WARN', SystemLogLevel: 'WARN' });
    // Lambda takes an EMF line (no level) for INFO: the functions that write metrics filter their own lines instead.
    for (const name of WRITERS) {
      expect(props(name).LoggingConfig, name).toMatchObject({ LogFormat: 'JSON', ApplicationLogLevel: 'INFO', SystemLogLevel: 'WARN' });
      expect((props(name).Environment as { Variables?: Record<string, unknown> }).Variables, name).toMatchObject({ FLOWMEND_LOG_LEVEL: 'WARN' });
    }
  });

  it('tells the functions that write runs where their metrics go, and the runners nothing', () => {
    for (const name of WRITERS) expect(envOf(name), name).toMatchObject({ POWERTOOLS_SERVICE_NAME: 'flowmend', POWERTOOLS_METRICS_NAMESPACE: 'flowmend' });
    expect(envOf('RunShell')).not.toHaveProperty('POWERTOOLS_METRICS_NAMESPACE');
    expect(envOf('Advance')).not.toHaveProperty('OTEL_EXPORTER_OTLP_ENDPOINT');
  });

  it('sends spans and metrics to the OTLP endpoint the otlpEndpoint prop names, from the functions that write runs', () => {
    const traced = asCfn(synthFlowmend({ otlpEndpoint: 'https://collector.internal:4318', metricsNamespace: 'team/flowmend' }).template);
    const env = (prefix: string) =>
      (traced.Resources[logicalId(traced, 'AWS::Lambda::Function', prefix)]?.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)
        ?.Variables ?? {};
    for (const name of WRITERS)
      expect(env(name), name).toMatchObject({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.internal:4318', POWERTOOLS_METRICS_NAMESPACE: 'team/flowmend' });
    expect(env('RunHttp')).not.toHaveProperty('OTEL_EXPORTER_OTLP_ENDPOINT');
    expect(() => synthFlowmend({ otlpEndpoint: 'collector:4318' })).toThrow(/otlpEndpoint/);
  });

  it('has a dashboard of every run metric in the namespace, and of the last failed runs from the log lines', () => {
    const dashboards = Object.values(cfn.Resources).filter((r) => r.Type === 'AWS::CloudWatch::Dashboard');
    expect(dashboards).toHaveLength(1);
    const body = JSON.stringify(dashboards[0]?.Properties?.DashboardBody);
    for (const metric of Object.values(RUN_METRICS)) expect(body, metric.name).toContain(`MetricName=\\\\\\"${metric.name}\\\\\\"`);
    expect(body).toContain('{flowmend,service,workflow,status}');
    expect(body).toContain('filter message = \\\\\\"run failed\\\\\\"');
  });
});
