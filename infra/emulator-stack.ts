import type { App } from 'aws-cdk-lib';
import { ScheduledWorkflow } from './constructs/scheduled-workflow.ts';
import { FlowmendStack } from './flowmend-stack.ts';
import type { FlowmendStackProps } from './props.ts';

/** The stack `npm test` deploys to the AWS emulator (moto), beside the default one in the same synth. */
export const EMULATOR_STACK_NAME = 'FlowmendEmulator';

/**
 * The default stack but for what the emulator needs: deletable; schedules as EventBridge rules (the
 * emulator fires rules and schedules on request, and rules are what the scenario of scheduled starts
 * covers; Scheduler's `at()` schedules fire by themselves, so waiting runs wake by them as on AWS); and
 * a run continues as a new execution every 12 engine steps, so that a short run crosses executions.
 */
export const EMULATOR_STACK_PROPS: FlowmendStackProps = {
  removalPolicy: 'destroy',
  scheduleMode: 'rules',
  waitWakeups: 'scheduler',
  maxAdvancesPerExecution: 12,
  description: 'flowmend on the AWS emulator (npm test, npm run deploy:emulator)',
};

/** A workflow scheduled as code, in rules mode: the emulator fires its rule at chosen times. */
export const EMULATOR_SCHEDULED_WORKFLOW = 'nightly-hello';

export function addEmulatorStack(app: App): FlowmendStack {
  const stack = new FlowmendStack(app, EMULATOR_STACK_NAME, EMULATOR_STACK_PROPS);
  new ScheduledWorkflow(stack, 'NightlyHello', {
    schedules: stack.schedules,
    workflowName: EMULATOR_SCHEDULED_WORKFLOW,
    schedule: 'cron(0 3 * * ? *)',
    workflow: {
      ir_version: '0.1.0',
      nodes: [{ id: 'greet', type: 'shell', params: { command: 'echo scheduled' } }],
      outputs: { said: { source: '${greet.stdout}' } },
    },
  });
  return stack;
}
