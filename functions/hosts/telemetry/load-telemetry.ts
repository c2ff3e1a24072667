import type { Redactor, RunObservation, RunObserver } from '../../core/index.ts';
import { exportsAnything, type TelemetryConfig } from './telemetry-config.ts';

/** What a host observes runs with, and how it hands its telemetry out. */
export interface Telemetry {
  observer: RunObserver;
  /** Runs started here get a trace even when their caller sent none. */
  traced: boolean;
  /** serve's `GET /metrics`. */
  prometheusText?: () => Promise<string>;
  /** Exports what is pending; never rejects (a collector that is down costs the spans, not the run). */
  flush(): Promise<void>;
  /** Flushes and stops; never rejects. */
  shutdown(): Promise<void>;
}

export interface TelemetryOptions {
  /** Error messages on spans and log lines go through it. */
  redactor?: Redactor | undefined;
  /** Observers of the host's own (its log lines). */
  also?: readonly RunObserver[];
  /** Told when an export failed (the collector is down, refused the data). */
  onExportError?: (error: unknown) => void;
  /** Runs started here get a trace even when nothing exports spans (a host that logs runs); else only when one does. */
  traced?: boolean;
}

/**
 * The OpenTelemetry SDK, imported only when the config exports something: a host with nothing configured
 * loads none of it (the CLI's start-up path, test/hosts/cli/command-loads.test.ts). `also` observe too (a
 * host's log lines). Undefined when nothing observes.
 */
export const loadTelemetry = async (config: TelemetryConfig, options: TelemetryOptions = {}): Promise<Telemetry | undefined> => {
  const also = options.also ?? [];
  const local = { observer: fanOut(also), traced: false, flush: async () => {}, shutdown: async () => {} };
  if (!exportsAnything(config)) return also.length > 0 ? local : undefined;
  const { startOtel } = await import('../../adapters/otel/otel-telemetry.ts');
  const otel = await startOtel({ ...config, redactor: options.redactor });
  const settle = (work: () => Promise<void>) => () => work().catch((error: unknown) => options.onExportError?.(error));
  return {
    ...otel,
    observer: fanOut([otel.observer, ...also]),
    traced: config.tracesUrl !== undefined,
    flush: settle(otel.flush),
    shutdown: settle(otel.shutdown),
  };
};

/**
 * Telemetry whose SDK loads when `start` is called (`serve` calls it once it listens: the SDK's ~0.2 s of
 * loading does not delay the port). `also` observe at once; what runs do before the SDK is there waits
 * for it (spans and metrics are made after the fact from recorded data, so late is the same).
 */
export const deferredTelemetry = (config: TelemetryConfig, options: TelemetryOptions = {}): Telemetry & { start(): Promise<void> } => {
  let ready: Telemetry | undefined;
  let loading: Promise<void> | undefined;
  const waiting: RunObservation[][] = [];
  const sdk: RunObserver = {
    observe: (observations) => {
      if (ready) ready.observer.observe(observations);
      else if (exportsAnything(config)) waiting.push([...observations]);
    },
  };
  const start = (): Promise<void> => {
    loading ??= loadTelemetry(config, { ...options, also: [] }).then((telemetry) => {
      ready = telemetry;
      for (const batch of waiting.splice(0)) telemetry?.observer.observe(batch);
    });
    return loading;
  };
  return {
    observer: fanOut([...(options.also ?? []), sdk]),
    traced: options.traced === true || config.tracesUrl !== undefined,
    ...(config.prometheus
      ? {
          prometheusText: async () => {
            await start();
            return (await ready?.prometheusText?.()) ?? '';
          },
        }
      : {}),
    flush: async () => {
      await loading;
      await ready?.flush();
    },
    shutdown: async () => {
      await loading;
      await ready?.shutdown();
    },
    start,
  };
};

/** One observer that tells each of `observers`, in order. */
const fanOut = (observers: readonly RunObserver[]): RunObserver => ({
  observe: (observations) => {
    for (const observer of observers) observer.observe(observations);
  },
});
