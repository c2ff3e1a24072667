/**
 * Workflows and schedules as code: the flowmend stack plus two scheduled workflows.
 *
 *   npx cdk synth --app "node --import tsx examples/cdk/scheduled-app.ts"
 *   npx cdk deploy --app "node --import tsx examples/cdk/scheduled-app.ts"
 *
 * `nightly-report` carries its workflow in the template (checked at synth); `hourly-sync` runs whatever
 * was last registered as `hourly-sync` through the API (`PUT /workflows/hourly-sync`).
 */
import { pathToFileURL } from 'node:url';
import { App } from 'aws-cdk-lib';
import { ScheduledWorkflow } from '../../infra/constructs/scheduled-workflow.ts';
import { FlowmendStack } from '../../infra/flowmend-stack.ts';

const nightlyReport = {
  ir_version: '0.1.0',
  description: "Counts yesterday's orders and posts the figure",
  inputs: { endpoint: { type: 'string', required: false, default: 'https://example.com/orders/count' } },
  nodes: [
    { id: 'count', type: 'http', params: { url: '${endpoint}', method: 'GET', timeout_s: 30 } },
    { id: 'summary', type: 'transform', params: { expression: '"orders: " & $string($.count)', input: '${count.response}' } },
  ],
  edges: [{ from: 'count', to: 'summary', action: 'default' }],
  outputs: { summary: { source: '${summary.result}' } },
};

export function buildScheduledApp(app: App = new App()): { app: App; stack: FlowmendStack } {
  const stack = new FlowmendStack(app, 'FlowmendScheduled', { removalPolicy: 'destroy' });
  new ScheduledWorkflow(stack, 'NightlyReport', {
    schedules: stack.schedules,
    workflowName: 'nightly-report',
    workflow: nightlyReport,
    schedule: 'cron(0 6 * * ? *)',
    timezone: 'Europe/Paris',
  });
  new ScheduledWorkflow(stack, 'HourlySync', {
    schedules: stack.schedules,
    workflowName: 'hourly-sync',
    schedule: 'rate(1 hour)',
    params: { full: false },
  });
  return { app, stack };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) buildScheduledApp().app.synth();
