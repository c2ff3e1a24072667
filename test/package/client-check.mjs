// Copied into the directory where the packed tarball is installed and run there (on each tested Node), so that
// `flowmend/client` is the installed package's: every call of the typed client against the `serve` at argv[2].
import { ApiCallError, FlowmendClient } from 'flowmend/client';

const client = new FlowmendClient({ url: process.argv[2] });
const hello = {
  ir_version: '0.1.0',
  inputs: { name: { type: 'string', required: true } },
  nodes: [{ id: 'greet', type: 'shell', params: { command: 'echo "Hello, ${name}"' } }],
  outputs: { greeting: { source: '${greet.stdout}' } },
};
const broken = { ir_version: '0.1.0', nodes: [{ id: 'step', type: 'shell', params: { command: 'exit 3' } }] };
const fixed = {
  ir_version: '0.1.0',
  nodes: [{ id: 'step', type: 'shell', params: { command: 'echo fixed' } }],
  outputs: { out: { source: '${step.stdout}' } },
};
const slow = { ir_version: '0.1.0', nodes: [{ id: 'nap', type: 'shell', params: { command: 'sleep 60' } }] };
const gated = {
  ir_version: '0.1.0',
  nodes: [{ id: 'ship', type: 'shell', approval: 'required', params: { command: 'echo shipped' } }],
  outputs: { out: { source: '${ship.stdout}' } },
};

const started = await client.start({ workflow: hello, name: 'hello', params: { name: 'Ada' }, idempotencyKey: `check-${process.pid}` });
const again = await client.start({ workflow: hello, name: 'hello', params: { name: 'Ada' }, idempotencyKey: `check-${process.pid}` });
const followed = [];
for await (const event of client.follow(started.run_id)) followed.push(event);
const report = await client.get(started.run_id);
const listed = await client.list({ limit: 10 });

const registered = await client.registerWorkflow('hello', hello);
const schedule = await client.setSchedule('hello', { expression: 'rate(1 hour)', params: { name: 'team' } });
const byName = await client.wait((await client.start({ workflowName: 'hello', params: { name: 'Bo' } })).run_id);
const workflows = await client.listWorkflows();

const failed = await client.wait((await client.start({ workflow: broken, repair: false })).run_id);
const current = await client.runWorkflow(failed.run_id);
await client.resume(failed.run_id, { workflow: fixed });
const resumed = await client.wait(failed.run_id);

const held = await client.wait((await client.start({ workflow: gated })).run_id);
const approved = await client.approve(held.run_id, { comment: 'ok', waitId: held.waiting?.wait_id, by: 'package-test' });
const shipped = await client.wait(held.run_id);
const refused = await client.wait((await client.start({ workflow: gated })).run_id);
const denied = await client.deny(refused.run_id, { comment: 'not today' });
const stopped = await client.wait(refused.run_id);

const napping = await client.start({ workflow: slow });
const cancelled = await client.cancel(napping.run_id);

let missing;
try {
  await client.getWorkflow('no-such-workflow');
} catch (error) {
  missing = { apiCallError: error instanceof ApiCallError, status: error.status, code: error.code };
}

console.log(
  JSON.stringify({
    started,
    replayed: again.replayed && again.run_id === started.run_id,
    followed: followed.length,
    status: report.status,
    greeting: report.result?.greeting,
    listed: listed.runs.map((run) => run.run_id),
    registered: { name: registered.name, version: registered.version },
    schedule: { workflow: schedule.workflow, next: schedule.next_fire_times.length },
    byName: { status: byName.status, greeting: byName.result?.greeting },
    workflows: workflows.workflows.map((w) => w.name),
    failed: failed.status,
    current: { version: current.version, node: current.workflow.nodes[0]?.params.command },
    resumed: { status: resumed.status, out: resumed.result?.out },
    approval: { held: held.status, answered: approved.answered, shipped: shipped.status, out: shipped.result?.out },
    denial: { answered: denied.answered, status: stopped.status },
    cancelled: cancelled.status,
    missing,
  }),
);
