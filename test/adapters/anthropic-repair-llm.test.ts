import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAnthropicRepairLlm, repairModelFromEnv } from '../../functions/adapters/anthropic-repair-llm.ts';
import { type FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic.ts';

let fake: FakeAnthropic;
beforeAll(async () => {
  fake = await startFakeAnthropic();
});
afterAll(() => fake.close());

const request = { system: 'you repair', prompt: 'fix it', model: 'claude-haiku-4-5', maxTokens: 4096 };

describe('makeAnthropicRepairLlm', () => {
  it('sends the system and the prompt and returns the text with its usage', async () => {
    fake.enqueue({ text: '{"workflow":{},"reason":"r"}', usage: { input_tokens: 321, output_tokens: 45 } });
    const reply = await makeAnthropicRepairLlm({ apiKey: 'test-key', baseURL: fake.baseURL }).complete(request);
    expect(reply).toEqual({ text: '{"workflow":{},"reason":"r"}', usage: { input_tokens: 321, output_tokens: 45 } });
    expect(fake.calls.at(-1)?.body).toMatchObject({
      model: 'claude-haiku-4-5',
      max_tokens: 4096,
      system: 'you repair',
      messages: [{ role: 'user', content: 'fix it' }],
    });
  });

  it('says when the reply was cut off at max_tokens', async () => {
    fake.enqueue({ text: '{"workflow": {"nod', stopReason: 'max_tokens' });
    const reply = await makeAnthropicRepairLlm({ apiKey: 'test-key', baseURL: fake.baseURL }).complete(request);
    expect(reply.text).toBe('(the reply was cut off at max_tokens=4096) {"workflow": {"nod');
  });

  it('maps 429 to a TransientError and 401 to a ConfigurationError', async () => {
    const llm = makeAnthropicRepairLlm({ apiKey: 'test-key', baseURL: fake.baseURL });
    fake.enqueue({ status: 429 });
    await expect(llm.complete(request)).rejects.toMatchObject({ name: 'TransientError' });
    fake.enqueue({ status: 401 });
    await expect(llm.complete(request)).rejects.toMatchObject({ name: 'ConfigurationError', message: expect.stringContaining('ANTHROPIC_API_KEY') });
  });
});

describe('repairModelFromEnv', () => {
  it('reads FLOWMEND_REPAIR_MODEL, else a current Haiku', () => {
    expect(repairModelFromEnv({ FLOWMEND_REPAIR_MODEL: 'claude-sonnet-4-6' })).toBe('claude-sonnet-4-6');
    expect(repairModelFromEnv({})).toBe('claude-haiku-4-5');
  });
});
