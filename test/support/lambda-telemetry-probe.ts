// Bundled by test/infra/otel-side-file.test.ts as a Lambda handler is: tells the function's telemetry that a
// traced run stopped, then settles as every handler does before it returns.
import { lambdaTelemetry } from '../../functions/hosts/lambda/lambda-telemetry.ts';
import { settleTelemetry } from '../../functions/hosts/lambda/telemetry-settle.ts';
import { aRun } from './builders.ts';

export const handler = async (): Promise<void> => {
  const trace = { traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174', rootSpanId: 'eee19b7ec3c1b174', since: 1000, sampled: true };
  const run = aRun({ runId: 'run-lambda-otel', workflowName: 'on-lambda', trace, status: 'succeeded' });
  lambdaTelemetry().observer.observe([{ kind: 'run_stopped', run, at: 2000, status: 'succeeded' }]);
  await settleTelemetry();
};
