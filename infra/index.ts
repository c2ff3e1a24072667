// `flowmend/cdk`: the constructs a CDK app of your own imports (the npm package builds this into lib/cdk/).
export { FlowmendApi, type FlowmendApiProps } from './constructs/api.ts';
export { FlowmendEngine, type FlowmendEngineProps } from './constructs/engine.ts';
export { ScheduledWorkflow, type ScheduledWorkflowProps } from './constructs/scheduled-workflow.ts';
export { RunSchedules } from './constructs/schedules.ts';
export { RunWaits } from './constructs/waits.ts';
export { FlowmendStack, RUNNER_TIMEOUTS } from './flowmend-stack.ts';
export { type FlowmendSettings, type FlowmendSettingsInput, FlowmendSettingsSchema, type FlowmendStackProps } from './props.ts';
