import type { Attributes, Counter, Histogram, Meter } from '@opentelemetry/api';
import type { RunObservation, RunObserver } from '../../core/index.ts';
import { metricPointsOf, RUN_METRICS, type RunMetricName } from '../run-metric-points.ts';

/** Node durations, seconds: a no-op transform (milliseconds) up to a 15-minute shell or LLM call. */
const DURATION_BUCKETS_S = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900];

/** The run metrics (run-metric-points.ts) as OpenTelemetry instruments: counters and one histogram. */
export class RunInstruments implements RunObserver {
  private readonly instruments: Record<RunMetricName, { add?: Counter['add']; record?: Histogram['record'] }>;

  constructor(meter: Meter) {
    const make = (metric: RunMetricName) => {
      const spec = RUN_METRICS[metric];
      if (spec.kind === 'histogram') {
        const histogram = meter.createHistogram(spec.name, {
          unit: spec.unit,
          description: spec.description,
          advice: { explicitBucketBoundaries: DURATION_BUCKETS_S },
        });
        return { record: histogram.record.bind(histogram) };
      }
      const counter = meter.createCounter(spec.name, { unit: spec.unit, description: spec.description });
      return { add: counter.add.bind(counter) };
    };
    this.instruments = {
      runsStarted: make('runsStarted'),
      runsEnded: make('runsEnded'),
      nodeDuration: make('nodeDuration'),
      repairs: make('repairs'),
      llmTokens: make('llmTokens'),
      llmCost: make('llmCost'),
    };
  }

  observe(observations: readonly RunObservation[]): void {
    for (const o of observations) {
      for (const point of metricPointsOf(o)) {
        const instrument = this.instruments[point.metric];
        const attributes: Attributes = point.attributes;
        if (instrument.add) instrument.add(point.value, attributes);
        else instrument.record?.(point.value, attributes);
      }
    }
  }
}
