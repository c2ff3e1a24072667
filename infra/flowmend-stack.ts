import { Stack } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { FlowmendApi } from './constructs/api.ts';
import { FlowmendEngine } from './constructs/engine.ts';
import type { RunStateMachine } from './constructs/run-state-machine.ts';
import type { RunSchedules } from './constructs/schedules.ts';
import type { RunWaits } from './constructs/waits.ts';
import type { FlowmendSettings, FlowmendStackProps } from './props.ts';

export { API_TIMEOUT_S, RUN_STORE_ACTIONS, RUNNER_TIMEOUTS } from './constructs/engine.ts';

/** The whole engine in one account, as a stack of its own: a `FlowmendEngine` and nothing else. */
export class FlowmendStack extends Stack {
  /** The engine this stack holds (its resources, settings and grants). */
  readonly engine: FlowmendEngine;
  readonly settings: FlowmendSettings;
  readonly express: RunStateMachine;
  readonly standard: RunStateMachine;
  readonly api: FlowmendApi;
  /** Where schedules live and what they invoke; pass it to `ScheduledWorkflow`. */
  readonly schedules: RunSchedules;
  /** Wake-up schedules and the callback secret of waiting runs. */
  readonly waits: RunWaits;

  constructor(scope: Construct, id: string, props: FlowmendStackProps = {}) {
    super(scope, id, props);
    // `Default` is the id CDK leaves out of logical ids and of output names: the resources keep the ids they had
    // when this stack built them itself, so a deployed stack updates in place (no table or bucket replaced).
    this.engine = new FlowmendEngine(this, 'Default', props);
    ({ settings: this.settings, express: this.express, standard: this.standard, api: this.api, schedules: this.schedules, waits: this.waits } = this.engine);
  }
}
