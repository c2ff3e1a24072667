import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { describe, expect, it } from 'vitest';
import { FlowmendEngine } from '../../infra/constructs/engine.ts';
import { ScheduledWorkflow } from '../../infra/constructs/scheduled-workflow.ts';
import { synthFlowmend } from '../support/synth-flowmend.ts';

const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

describe('FlowmendEngine: the engine in a stack of your own', () => {
  it('sits beside your resources, names what it names after your stack, and schedules with ScheduledWorkflow', () => {
    const stack = new Stack(new App({ context: NO_BUNDLING }), 'MyFlows');
    new sqs.Queue(stack, 'MyOwnQueue');
    const engine = new FlowmendEngine(stack, 'Flowmend', { removalPolicy: 'destroy', scheduleMode: 'rules' });
    new ScheduledWorkflow(stack, 'Nightly', { schedules: engine.schedules, workflowName: 'nightly', schedule: 'cron(0 3 * * ? *)' });
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::SQS::Queue', 3); // the user's, and the engine's two dead-letter queues (watcher, schedules)
    const names = Object.values(template.findResources('AWS::StepFunctions::StateMachine')).map((m) => m.Properties.StateMachineName);
    expect(names.sort()).toEqual(['MyFlows-express', 'MyFlows-standard']);
    template.resourceCountIs('AWS::Events::Rule', 2); // the nightly schedule, and the watcher's of Standard executions
    expect(engine.schedules.name).toBe('MyFlows');
    expect(engine.settings.removalPolicy).toBe('destroy');
  });

  it('takes a name of its own, so that two engines can share a stack', () => {
    const stack = new Stack(new App({ context: NO_BUNDLING }), 'Shared');
    new FlowmendEngine(stack, 'Blue', { name: 'blue' });
    new FlowmendEngine(stack, 'Green', { name: 'green' });
    const names = Object.values(Template.fromStack(stack).findResources('AWS::StepFunctions::StateMachine')).map((m) => m.Properties.StateMachineName);
    expect(names.sort()).toEqual(['blue-express', 'blue-standard', 'green-express', 'green-standard']);
  });

  it("leaves FlowmendStack's logical ids as they were when the stack built the engine itself (no replaced table on update)", () => {
    const { template } = synthFlowmend();
    const ids = Object.keys(template.toJSON().Resources);
    expect(ids.filter((id) => id.startsWith('Default'))).toEqual([]);
    expect(Object.keys(template.findResources('AWS::DynamoDB::Table'))).toEqual([expect.stringMatching(/^RunsTable[0-9A-F]{8}$/)]);
    expect(Object.keys(template.findResources('AWS::StepFunctions::StateMachine')).sort()).toEqual([
      expect.stringMatching(/^ExpressStateMachine[0-9A-F]{8}$/),
      expect.stringMatching(/^StandardStateMachine[0-9A-F]{8}$/),
    ]);
  });
});
