import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic.ts';
import { callsNotAllowed, type DeployedStack, explain, useDeployedStack } from './support/stack.ts';

/** The secret the stack's Repair and llm runner read the key from (infra/props.ts `anthropicSecretName`). */
const SECRET = 'flowmend/anthropic-api-key';

let stack: DeployedStack;
let mark = 0;
let fake: FakeAnthropic;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  stack = await useDeployedStack();
  mark = stack.mark();
  fake = await startFakeAnthropic();
});
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
  await fake?.close();
});

describe('repair on the stack deployed to the AWS emulator', () => {
  it('repairs with its rules when the account has no Anthropic secret (the Repair Lambda starts without it)', async () => {
    // An output key typo the rules fix (`stdot` -> `stdout`), caught before the run by validation.
    const workflow = {
      ir_version: '0.1.0',
      nodes: [
        { id: 'greet', type: 'shell', params: { command: 'echo hello' } },
        { id: 'shout', type: 'shell', params: { stdin: '${greet.stdot}', command: 'tr a-z A-Z' } },
      ],
      edges: [{ from: 'greet', to: 'shout' }],
      outputs: { loud: { source: '${shout.stdout}' } },
    };
    const report = await stack.waitFor(await stack.start({ workflow }));
    expect(report, explain(report)).toMatchObject({ status: 'succeeded', result: { loud: 'HELLO' } });
    expect(report.repairs?.[0]).toMatchObject({ outcome: 'applied' });
  });

  it('says why the LLM could not repair when the rules cannot and there is no secret, and fails the run', async () => {
    const workflow = { ir_version: '0.1.0', nodes: [{ id: 'boom', type: 'shell', params: { command: 'exit 7' } }] };
    const report = await stack.waitFor(await stack.start({ workflow, max_repairs: 1 }));
    expect(report.status, explain(report)).toBe('failed');
    expect(JSON.stringify(report.repairs)).toContain(`no LLM repair: the Anthropic key cannot be read from secret ${SECRET}`);
  });

  it('repairs with the LLM when the secret holds a key (and the base URL of the fake Anthropic API)', async () => {
    cleanups.push(await stack.putSecret(SECRET, JSON.stringify({ ANTHROPIC_API_KEY: 'sk-emulator', ANTHROPIC_BASE_URL: fake.baseURL })));
    const workflow = { ir_version: '0.1.0', nodes: [{ id: 'count', type: 'shell', params: { command: 'echo one two three | wc -x' } }], outputs: {} };
    const fixed = { ...workflow, nodes: [{ id: 'count', type: 'shell', params: { command: 'echo one two three | wc -w' } }] };
    fake.enqueue({ text: JSON.stringify({ workflow: fixed, reason: 'wc counts words with -w' }) });
    const report = await stack.waitFor(await stack.start({ workflow }));
    expect(report.status, explain(report)).toBe('succeeded');
    expect(report.repairs?.[0]).toMatchObject({ outcome: 'applied', reason: 'wc counts words with -w' });
    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0]?.headers.authorization).toBe('Bearer sk-emulator');
  });

  it("makes only AWS calls its Lambdas' roles allow", async () => {
    expect(await callsNotAllowed(stack, mark)).toEqual([]);
  });
});
