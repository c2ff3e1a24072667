import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { RunObservation, RunObserver } from '../core/index.ts';
import { metricPointsOf, RUN_METRICS, type RunMetricName } from './run-metric-points.ts';

/** CloudWatch's unit for each run metric. */
const UNITS: Record<RunMetricName, (typeof MetricUnit)[keyof typeof MetricUnit]> = {
  runsStarted: MetricUnit.Count,
  runsEnded: MetricUnit.Count,
  nodeDuration: MetricUnit.Seconds,
  repairs: MetricUnit.Count,
  llmTokens: MetricUnit.Count,
  llmCost: MetricUnit.NoUnit,
};

/**
 * The run metrics (run-metric-points.ts) as CloudWatch metrics in Embedded Metric Format, through
 * Powertools Metrics: one EMF line per data point (its attributes are its dimensions, beside `service`;
 * each point has its own), written at once to the function's log, with the run id as metadata (not a
 * dimension: one series per run would cost a metric each).
 */
export class RunMetricsEmf implements RunObserver {
  constructor(private readonly metrics: Metrics) {}

  observe(observations: readonly RunObservation[]): void {
    for (const o of observations) {
      for (const point of metricPointsOf(o)) {
        const single = this.metrics.singleMetric();
        single.addDimensions(point.attributes);
        single.addMetadata('run_id', o.run.runId);
        single.addMetric(RUN_METRICS[point.metric].name, UNITS[point.metric], point.value);
      }
    }
  }
}
