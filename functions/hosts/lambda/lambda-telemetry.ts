import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { OtelTelemetry } from '../../adapters/otel/otel-telemetry.ts';
import { RunLog } from '../../adapters/run-log.ts';
import { RunMetricsEmf } from '../../adapters/run-metrics-emf.ts';
import type { RunObservation, RunObserver } from '../../core/index.ts';
import { Redactor } from '../../core/index.ts';
import { engineSecrets } from '../cli/cli-secrets.ts';
import { logThresholdFrom, passes } from '../telemetry/json-lines.ts';
import { exportsAnything, type TelemetryConfig, telemetryConfigFrom } from '../telemetry/telemetry-config.ts';
import { importOtel } from './bundled-otel.ts';
import { setSettle } from './telemetry-settle.ts';

/** The namespace of the run metrics unless POWERTOOLS_METRICS_NAMESPACE names another (the stack's dashboard reads it). */
export const DEFAULT_METRICS_NAMESPACE = 'flowmend';
const DEFAULT_SERVICE = 'flowmend';

export interface LambdaTelemetry {
  /** Log lines (Powertools Logger), EMF metrics (Powertools Metrics), and spans when an OTLP endpoint is set. */
  observer: RunObserver;
  /** Runs started here get a trace of their own, always: its id is what a run's lines share across functions. */
  traced: boolean;
  logger: Logger;
}

/**
 * Spans and metrics for an OTLP endpoint, from the SDK's side file (bundled-otel.ts) loaded in the
 * background at the cold start: observations made
 * before it is there wait for it (spans are made after the fact from what runs recorded, so late is
 * fine), and every invocation waits for them to go out before it returns (telemetry-settle.ts).
 */
const deferredOtel = (config: TelemetryConfig, logger: Logger, redactor: Redactor): RunObserver => {
  let ready: OtelTelemetry | undefined;
  const waiting: RunObservation[][] = [];
  const loaded = importOtel()
    .then(async (startOtel) => {
      const otel = await startOtel({ ...config, redactor });
      ready = otel;
      for (const batch of waiting.splice(0)) otel.observer.observe(batch);
    })
    .catch((error: unknown) => logger.warn('OpenTelemetry did not start', { error: String(error) }));
  setSettle(async () => {
    await loaded;
    // A collector that is down costs the spans, not the invocation.
    await ready?.flush().catch((error: unknown) => logger.warn('OpenTelemetry export failed', { error: String(error) }));
  });
  return {
    observe: (observations) => {
      if (ready) ready.observer.observe(observations);
      else waiting.push([...observations]);
    },
  };
};

/**
 * A function's telemetry from its environment: the level of its lines about runs (FLOWMEND_LOG_LEVEL, and
 * Powertools Logger's own: POWERTOOLS_LOG_LEVEL, or the function's application log level, AWS_LAMBDA_LOG_LEVEL),
 * the metrics namespace, and the standard OTEL_* variables. Throws ConfigurationError for a value it cannot use.
 */
export const makeLambdaTelemetry = (env: NodeJS.ProcessEnv): LambdaTelemetry => {
  const serviceName = env.POWERTOOLS_SERVICE_NAME ?? DEFAULT_SERVICE;
  const logger = new Logger({ serviceName });
  const metrics = new Metrics({ namespace: env.POWERTOOLS_METRICS_NAMESPACE ?? DEFAULT_METRICS_NAMESPACE, serviceName });
  // The function's own credentials (and an Anthropic key in its environment) never reach a line or a span, as on the CLI.
  const redactor = new Redactor(engineSecrets(env));
  // Lambda's own filter must let the EMF lines through (they carry no level, so it takes them for INFO):
  // the stack sets the function's level no higher than INFO, and the lines' own here (FLOWMEND_LOG_LEVEL;
  // unset, Powertools Logger's level alone decides).
  const threshold = env.FLOWMEND_LOG_LEVEL === undefined ? 'DEBUG' : logThresholdFrom(env);
  const log = new RunLog(
    {
      write: (level, message, fields) => {
        if (passes(level, threshold)) logger[level === 'DEBUG' ? 'debug' : level === 'INFO' ? 'info' : level === 'WARN' ? 'warn' : 'error'](message, fields);
      },
    },
    redactor,
  );
  const observers: RunObserver[] = [log, new RunMetricsEmf(metrics)];
  const config = telemetryConfigFrom(env, 'lambda');
  if (exportsAnything(config)) observers.push(deferredOtel(config, logger, redactor));
  return {
    observer: {
      observe: (observations) => {
        for (const observer of observers) observer.observe(observations);
      },
    },
    // Every run on AWS has a trace id, exported or not: it is in every line of the run in every function's
    // log group, and it is the trace of the http nodes' traceparent (a trace id costs 16 bytes in the run item).
    traced: true,
    logger,
  };
};

let made: LambdaTelemetry | undefined;

/** This function's telemetry, made once per cold start. */
export const lambdaTelemetry = (env: NodeJS.ProcessEnv = process.env): LambdaTelemetry => {
  made ??= makeLambdaTelemetry(env);
  return made;
};
