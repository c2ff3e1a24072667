import { DescribeRuleCommand, EventBridgeClient, ListRulesCommand } from '@aws-sdk/client-eventbridge';
import { beforeAll, describe, expect, it } from 'vitest';
import { EMULATOR_SCHEDULED_WORKFLOW, EMULATOR_STACK_NAME } from '../../infra/emulator-stack.ts';
import { EMULATOR_CREDENTIALS, EMULATOR_REGION } from '../../scripts/emulator/emulator.ts';
import { callsNotAllowed, type DeployedStack, useDeployedStack } from './support/stack.ts';

let stack: DeployedStack;
let events: EventBridgeClient;
let mark = 0;

beforeAll(async () => {
  stack = await useDeployedStack();
  mark = stack.mark();
  events = new EventBridgeClient({ endpoint: stack.endpoint, region: EMULATOR_REGION, credentials: EMULATOR_CREDENTIALS });
});

interface Listed {
  runs: { run_id: string; status: string; workflow: string }[];
}

const runsOf = async (workflow: string, count: number): Promise<Listed['runs']> => {
  const deadline = Date.now() + 60_000;
  let runs: Listed['runs'] = [];
  while (Date.now() < deadline) {
    runs = (await stack.api.call<Listed>('GET', `/runs?workflow=${encodeURIComponent(workflow)}`)).runs;
    if (runs.length >= count && runs.every((r) => r.status !== 'running')) return runs;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return runs;
};

describe('schedules of the stack deployed to the AWS emulator, as EventBridge rules (scheduleMode rules)', () => {
  it('a rule of a ScheduledWorkflow starts one run per fire time, however often a fire is delivered', async () => {
    const rules = (await events.send(new ListRulesCommand({ NamePrefix: `${EMULATOR_STACK_NAME}-NightlyHello` }))).Rules ?? [];
    expect(rules).toHaveLength(1);
    const name = rules[0]?.Name ?? '';
    expect(await stack.fireRule(name, '2026-11-25T03:00:00Z')).toMatchObject({ fired: true });
    expect(await stack.fireRule(name, '2026-11-25T03:00:00Z')).toMatchObject({ fired: true });
    expect(await stack.fireRule(name, '2026-11-26T03:00:00Z')).toMatchObject({ fired: true });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const runs = await runsOf(EMULATOR_SCHEDULED_WORKFLOW, 2);
    expect(runs).toHaveLength(2);
    expect(runs.every((r) => r.status === 'succeeded')).toBe(true);
  });

  it('a schedule registered through the API is a rule of its own (<stack>-schedule.<workflow>), which starts its runs', async () => {
    const workflow = { ir_version: '0.1.0', nodes: [{ id: 'tick', type: 'shell', params: { command: 'echo tick' } }] };
    await stack.api.call('PUT', '/workflows/ticker', { body: workflow });
    await stack.api.call('PUT', '/workflows/ticker/schedule', { body: { expression: 'rate(1 hour)' } });
    const rule = await events.send(new DescribeRuleCommand({ Name: `${EMULATOR_STACK_NAME}-schedule.ticker` }));
    expect(rule.ScheduleExpression).toBe('rate(1 hour)');
    await stack.fireRule(`${EMULATOR_STACK_NAME}-schedule.ticker`, '2026-11-25T10:00:00Z');
    const runs = await runsOf('ticker', 1);
    expect(runs.map((r) => r.status)).toEqual(['succeeded']);
  });

  it("makes only AWS calls its Lambdas' roles allow", async () => {
    expect(await callsNotAllowed(stack, mark)).toEqual([]);
  });
});
