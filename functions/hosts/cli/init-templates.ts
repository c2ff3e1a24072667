// The files `flowmend init` writes: a workflow, a test that runs it through the local host, a CDK app with the
// engine's construct, and the scripts (init-command.ts merges them into package.json).

export const HELLO_WORKFLOW = `${JSON.stringify(
  {
    ir_version: '0.1.0',
    description: 'Greets someone, then shouts the greeting',
    inputs: { name: { type: 'string', required: false, default: 'world' } },
    nodes: [
      { id: 'greet', type: 'shell', params: { command: 'echo "Hello, ${name}"' } },
      { id: 'shout', type: 'transform', params: { expression: '$uppercase($trim($))', input: '${greet.stdout}' } },
    ],
    edges: [{ from: 'greet', to: 'shout', action: 'default' }],
    outputs: { greeting: { source: '${shout.result}' } },
  },
  null,
  2,
)}\n`;

export const HELLO_TEST = `// Runs workflows/hello.json through flowmend's local host (SQLite in a temporary state directory), as
// \`npx flowmend run\` does, and checks its result. \`npm test\` runs it (node's own test runner).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const project = fileURLToPath(new URL('..', import.meta.url));
const flowmend = join(project, 'node_modules', '.bin', 'flowmend');

const run = async (...args) => {
  const stateDir = mkdtempSync(join(tmpdir(), 'flowmend-test-'));
  try {
    const { stdout } = await promisify(execFile)(flowmend, [...args, '--state-dir', stateDir, '--output-format', 'json'], { cwd: project });
    return JSON.parse(stdout);
  } catch (error) {
    // A failed run exits 1 and still prints its report.
    if (error.stdout) return JSON.parse(error.stdout);
    throw error;
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
};

test('hello greets the name it is given', async () => {
  const report = await run('run', 'workflows/hello.json', 'name=Ada');
  assert.equal(report.status, 'succeeded', JSON.stringify(report.errors));
  assert.equal(report.result.greeting, 'HELLO, ADA');
});

test('hello greets the world by default', async () => {
  const report = await run('run', 'workflows/hello.json');
  assert.equal(report.result.greeting, 'HELLO, WORLD');
});
`;

export const CDK_APP = `// The flowmend engine in a stack of your own, and hello.json run every morning by a schedule.
//   npx cdk synth        npx cdk deploy
// FlowmendStack (from 'flowmend/cdk') is the ready-made alternative: a stack holding the engine alone.
import { readFileSync } from 'node:fs';
import { App, Stack } from 'aws-cdk-lib';
import { FlowmendEngine, ScheduledWorkflow } from 'flowmend/cdk';

const app = new App();
const stack = new Stack(app, app.node.tryGetContext('stackName') ?? 'MyFlows');
const engine = new FlowmendEngine(stack, 'Flowmend', {
  // 'retain' (the default) keeps the runs' table and bucket when the stack is deleted.
  removalPolicy: 'destroy',
});
new ScheduledWorkflow(stack, 'HelloEveryMorning', {
  schedules: engine.schedules,
  workflowName: 'hello',
  workflow: JSON.parse(readFileSync(new URL('../workflows/hello.json', import.meta.url), 'utf8')),
  schedule: 'cron(0 7 * * ? *)',
  params: { name: 'team' },
});
app.synth();
`;

export const CDK_JSON = `${JSON.stringify({ app: 'node cdk/app.mjs', context: { '@aws-cdk/core:validateAgainstDefaultRules': true } }, null, 2)}\n`;

export const GITIGNORE = 'node_modules/\n.flowmend/\ncdk.out/\n';

export const README = `# My flowmend workflows

- \`npx flowmend run workflows/hello.json name=Ada\`: run a workflow on this machine (runs are kept in .flowmend/)
- \`npm test\`: run the workflow's test (test/hello.test.mjs)
- \`npx flowmend serve\`: the API and the run viewer on http://127.0.0.1:8787
- \`npx cdk deploy\`: the engine and the schedule in your AWS account (cdk/app.mjs)
`;

/** The scripts init adds to package.json (an existing script of the same name is kept). */
export const SCRIPTS: Readonly<Record<string, string>> = {
  test: 'node --test',
  hello: 'flowmend run workflows/hello.json',
  serve: 'flowmend serve',
  synth: 'cdk synth',
  deploy: 'cdk deploy',
};
