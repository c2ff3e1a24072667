import { readFileSync } from 'node:fs';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { buildScheduledApp } from '../../examples/cdk/scheduled-app.ts';
import { ScheduledStartEventSchema } from '../../functions/core/scheduled-start-event.ts';
import { ScheduledWorkflow } from '../../infra/constructs/scheduled-workflow.ts';
import { RunSchedules, type ScheduleMode } from '../../infra/constructs/schedules.ts';
import { asCfn, logicalId } from './stack-helpers.ts';

const cdkContext = (JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> }).context;
// The example app as `cdk synth` builds it, bundling skipped: the one full-stack synth of this file.
const { stack } = buildScheduledApp(new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } }));
const template = Template.fromStack(stack);
const cfn = asCfn(template);
const schedules = Object.values(template.findResources('AWS::Scheduler::Schedule'));
const byName = (name: string) => schedules.find((s) => JSON.stringify(s.Properties.Target.Input).includes(`\\"workflowName\\":\\"${name}\\"`));

/** A bare stack with only what schedules need, for the construct's own checks (no Lambda bundling, no engine). */
const bare = (mode: ScheduleMode) => {
  const scope = new Stack(new App(), 'Bare');
  const target = lambda.Function.fromFunctionAttributes(scope, 'Target', {
    functionArn: 'arn:aws:lambda:us-east-1:123456789012:function:start',
    sameEnvironment: true,
  });
  return { scope, schedules: new RunSchedules(scope, 'Schedules', { mode, target, name: 'Bare' }) };
};

describe('ScheduledWorkflow in the example app (examples/cdk/scheduled-app.ts)', () => {
  it('makes one Scheduler schedule per workflow, in the time zone given, invoking scheduled-start as the scheduler role', () => {
    expect(schedules).toHaveLength(2);
    const target = logicalId(cfn, 'AWS::Lambda::Function', 'ScheduledStart');
    const role = logicalId(cfn, 'AWS::IAM::Role', 'SchedulesSchedulerRole');
    expect(byName('nightly-report')?.Properties).toMatchObject({
      ScheduleExpression: 'cron(0 6 * * ? *)',
      ScheduleExpressionTimezone: 'Europe/Paris',
      State: 'ENABLED',
      FlexibleTimeWindow: { Mode: 'OFF' },
    });
    expect(byName('hourly-sync')?.Properties).toMatchObject({ ScheduleExpression: 'rate(1 hour)', ScheduleExpressionTimezone: 'UTC' });
    const group = logicalId(cfn, 'AWS::Scheduler::ScheduleGroup', 'SchedulesGroup');
    const queue = logicalId(cfn, 'AWS::SQS::Queue', 'SchedulesDeadLetters');
    for (const schedule of schedules) {
      expect(JSON.stringify(schedule.Properties.Target.Arn)).toContain(target);
      expect(JSON.stringify(schedule.Properties.Target.RoleArn)).toContain(role);
      // The stack's group (not the default one), and what could not be delivered kept in the stack's queue.
      expect(schedule.Properties.GroupName).toBe(cfn.Resources[group]?.Properties?.Name);
      expect(schedule.DependsOn).toContain(group);
      expect(JSON.stringify(schedule.Properties.Target.DeadLetterConfig)).toContain(queue);
    }
  });

  it('sends a scheduled start keyed by the fire time: the inline workflow for one, the registered name for the other', () => {
    const fired = (name: string) =>
      ScheduledStartEventSchema.parse(
        JSON.parse(String(byName(name)?.Properties.Target.Input).replace('<aws.scheduler.scheduled-time>', '2026-11-24T05:00:00Z')),
      );
    expect(fired('nightly-report')).toMatchObject({
      workflowName: 'nightly-report',
      scheduledTime: '2026-11-24T05:00:00Z',
      workflow: { nodes: [{ id: 'count' }, { id: 'summary' }] },
    });
    expect(fired('hourly-sync')).toEqual({ workflowName: 'hourly-sync', params: { full: false }, scheduledTime: '2026-11-24T05:00:00Z' });
  });
});

describe('ScheduledWorkflow checks at synth', () => {
  it('rejects a workflow that does not parse, a bad expression and an oversize input, naming what is wrong', () => {
    const { scope, schedules } = bare('scheduler');
    expect(() => new ScheduledWorkflow(scope, 'Broken', { schedules, workflowName: 'b', workflow: { nodes: 'none' }, schedule: 'rate(1 hour)' })).toThrow(
      /Broken: the workflow does not parse/,
    );
    expect(() => new ScheduledWorkflow(scope, 'Often', { schedules, workflowName: 'o', schedule: 'every hour' })).toThrow(/Often: schedule: cron\(\.\.\.\)/);
    const big = { nodes: [{ id: 'a', type: 'shell', params: { command: `echo ${'x'.repeat(9_000)}` } }] };
    expect(() => new ScheduledWorkflow(scope, 'Big', { schedules, workflowName: 'big', workflow: big, schedule: 'rate(1 hour)' })).toThrow(
      /over EventBridge's 8192/,
    );
  });

  it("takes a pflow .pflow.md as the workflow's text: compiled at synth into the IR the start carries, a broken one refused at its line", () => {
    const { scope, schedules } = bare('scheduler');
    const markdown = ['# Tick', '', 'Says tick.', '', '## Steps', '', '### tick', '', 'Tick.', '', '- type: shell', '- command: echo tick'].join('\n');
    const made = new ScheduledWorkflow(scope, 'Markdown', { schedules, workflowName: 'tick', workflow: markdown, schedule: 'rate(1 hour)' });
    const input = JSON.parse(String(made.schedule?.target && (made.schedule.target as { input: string }).input));
    expect(input.workflow).toMatchObject({ description: 'Says tick.', nodes: [{ id: 'tick', type: 'shell', params: { command: 'echo tick' } }] });
    expect(
      () => new ScheduledWorkflow(scope, 'BadMd', { schedules, workflowName: 'b', workflow: '## Steps\n### tick\nTick.\n', schedule: 'rate(1 hour)' }),
    ).toThrow(/BadMd: the \.pflow\.md workflow does not parse:[\s\S]*b\.pflow\.md:2:1/);
  });

  it('in rules mode, makes an EventBridge rule whose input carries the event time, and refuses what rules cannot do', () => {
    const { scope, schedules } = bare('rules');
    new ScheduledWorkflow(scope, 'Hourly', { schedules, workflowName: 'hourly', schedule: 'rate(1 hour)' });
    const rules = Object.values(Template.fromStack(scope).findResources('AWS::Events::Rule'));
    expect(rules).toHaveLength(1);
    const target = rules[0]?.Properties.Targets[0];
    expect(target.InputTransformer.InputPathsMap).toEqual({ time: '$.time' });
    expect(JSON.stringify(target.DeadLetterConfig)).toContain('SchedulesDeadLetters');
    const delivered = String(target.InputTransformer.InputTemplate).replace('<time>', '2026-11-24T05:00:00Z');
    expect(ScheduledStartEventSchema.parse(JSON.parse(delivered))).toMatchObject({ workflowName: 'hourly', scheduledTime: '2026-11-24T05:00:00Z' });
    expect(() => new ScheduledWorkflow(scope, 'Paris', { schedules, workflowName: 'p', schedule: 'cron(0 6 * * ? *)', timezone: 'Europe/Paris' })).toThrow(
      /UTC only/,
    );
    expect(() => new ScheduledWorkflow(scope, 'Once', { schedules, workflowName: 'o', schedule: 'at(2027-01-01T09:00:00)' })).toThrow(/UTC only/);
  });
});
