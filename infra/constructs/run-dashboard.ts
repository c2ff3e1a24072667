import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { RUN_METRICS } from '../../functions/adapters/run-metric-points.ts';

export interface RunDashboardProps {
  dashboardName: string;
  /** The metrics namespace the Lambdas write to (POWERTOOLS_METRICS_NAMESPACE). */
  namespace: string;
  /** The log groups of the functions that write run lines (engine, repair, API, starts, watcher). */
  logGroups: readonly logs.ILogGroup[];
}

/** The query that lists one run's lines across the functions' log groups (the README shows it too). */
export const ONE_RUN_QUERY = ['fields @timestamp, level, message, node_id, visit, status, error', 'filter run_id = "<run id>"', 'sort @timestamp asc'];

/**
 * The runs at a glance, from the EMF metrics the Lambdas write (functions/adapters/run-metrics-emf.ts):
 * runs started and ended by status, repairs, node durations, LLM tokens and cost, each per workflow
 * (or node type, model) found by a SEARCH, since workflows are data registered at run time. Beside
 * them, the last failed runs from the log lines.
 */
export class RunDashboard extends Construct {
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: RunDashboardProps) {
    super(scope, id);
    const period = Duration.minutes(5);
    const search = (metric: string, dimensions: readonly string[], stat: string, label: string) =>
      new cloudwatch.MathExpression({
        expression: `SEARCH('{${props.namespace},service,${dimensions.join(',')}} MetricName="${metric}"', '${stat}', ${period.toSeconds()})`,
        label,
        period,
      });
    const graph = (title: string, metrics: cloudwatch.IMetric[], stacked = false) =>
      new cloudwatch.GraphWidget({ title, left: metrics, width: 12, height: 6, stacked, period });
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: props.dashboardName,
      widgets: [
        [
          graph('Runs started, per workflow', [search(RUN_METRICS.runsStarted.name, ['workflow'], 'Sum', '')]),
          graph('Runs ended, per workflow and status', [search(RUN_METRICS.runsEnded.name, ['workflow', 'status'], 'Sum', '')], true),
        ],
        [
          graph('Repairs, per source and outcome', [search(RUN_METRICS.repairs.name, ['source', 'outcome'], 'Sum', '')], true),
          graph('Node duration p90 (s), per node type', [search(RUN_METRICS.nodeDuration.name, ['node_type', 'status'], 'p90', '')]),
        ],
        [
          graph('LLM tokens, per workflow and model', [search(RUN_METRICS.llmTokens.name, ['workflow', 'model', 'token_type', 'purpose'], 'Sum', '')], true),
          graph('LLM cost (USD), per workflow and model', [search(RUN_METRICS.llmCost.name, ['workflow', 'model', 'purpose'], 'Sum', '')], true),
        ],
        [
          new cloudwatch.LogQueryWidget({
            title: 'Last failed runs',
            logGroupNames: props.logGroups.map((g) => g.logGroupName),
            queryLines: [
              'fields @timestamp, run_id, workflow, node_id, error_code, error',
              'filter message = "run failed"',
              'sort @timestamp desc',
              'limit 20',
            ],
            width: 24,
            height: 6,
          }),
        ],
      ],
    });
  }
}
