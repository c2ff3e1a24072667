import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envLlmConfig, type LlmConfig } from '../../functions/adapters/anthropic-client.ts';
import { makeAnthropicLlmClient } from '../../functions/adapters/anthropic-llm-client.ts';
import { classifyOutcome } from '../../functions/core/classify.ts';
import { ConfigurationError, TransientError } from '../../functions/core/errors.ts';
import type { RunContext, RunnerResult } from '../../functions/core/node-type.ts';
import { DEFAULT_LLM_MODEL, makeLlmRunner } from '../../functions/nodes/llm.ts';
import { costUsd, priceOf } from '../../functions/nodes/llm-prices.ts';
import { type FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic.ts';
import { runWithParams } from '../support/run-with-params.ts';

let fake: FakeAnthropic;
const context: RunContext = { runId: 'run_llm_1', nodeId: 'ask', seq: 1, cacheKey: 'k1' };

beforeAll(async () => {
  fake = await startFakeAnthropic();
});
afterAll(() => fake.close());

const runnerWith = (config: LlmConfig) => makeLlmRunner({ config: () => config, client: makeAnthropicLlmClient() });
const configured = () => runnerWith({ apiKey: 'test-key', baseURL: fake.baseURL });
const ok = (result: RunnerResult) => {
  if (result.kind !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(result.error)}`);
  return result;
};

describe('llm runner', () => {
  it('sends prompt, system, model and temperature and returns the text with usage and cost', async () => {
    fake.enqueue({ text: 'Paris', usage: { input_tokens: 1000, output_tokens: 500 } });
    const result = ok(
      await runWithParams(
        configured(),
        { prompt: 'Capital of France?', system: 'Answer in one word.', model: 'claude-sonnet-4-6', temperature: 0.2, max_tokens: 64 },
        context,
      ),
    );
    const usage = { model: 'claude-sonnet-4-6', input_tokens: 1000, output_tokens: 500, cost_usd: 0.0105 };
    expect(result.outputs).toEqual({ response: 'Paris', usage, stop_reason: 'end_turn' });
    expect(result.usage).toEqual(usage);
    const call = fake.calls.at(-1);
    expect(call?.path).toBe('/v1/messages');
    expect(call?.headers.authorization).toBe('Bearer test-key');
    expect(call?.body).toEqual({
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Capital of France?' }],
      system: 'Answer in one word.',
      temperature: 0.2,
    });
  });

  it('uses the configured default model, else a current Haiku, and 1024 max_tokens', async () => {
    fake.enqueue({ text: 'a' });
    await runWithParams(runnerWith({ apiKey: 'test-key', baseURL: fake.baseURL, defaultModel: 'claude-opus-4-6' }), { prompt: 'x' }, context);
    expect(fake.calls.at(-1)?.body).toMatchObject({ model: 'claude-opus-4-6', max_tokens: 1024 });
    fake.enqueue({ text: 'b' });
    await runWithParams(configured(), { prompt: 'x' }, context);
    expect(fake.calls.at(-1)?.body.model).toBe(DEFAULT_LLM_MODEL);
    expect(fake.calls.at(-1)?.body).not.toHaveProperty('temperature');
  });

  it.each([429, 500, 529])('throws TransientError on HTTP %i so the state machine retries', async (status) => {
    fake.enqueue({ status });
    const before = fake.calls.length;
    await expect(runWithParams(configured(), { prompt: 'x' }, context)).rejects.toBeInstanceOf(TransientError);
    expect(fake.calls.length).toBe(before + 1);
  });

  it('throws ConfigurationError when Anthropic rejects the key', async () => {
    fake.enqueue({ status: 401 });
    await expect(runWithParams(configured(), { prompt: 'x' }, context)).rejects.toThrow(/401.*ANTHROPIC_API_KEY/);
  });

  it('returns a bad request as repairable data', async () => {
    fake.enqueue({ status: 404, body: { type: 'error', error: { type: 'not_found_error', message: 'model: claude-nope' } } });
    const result = await runWithParams(configured(), { prompt: 'x', model: 'claude-nope' }, context);
    expect(result).toMatchObject({ kind: 'failed', error: { code: 'LLM_REQUEST_REJECTED', message: expect.stringContaining('model: claude-nope') } });
    expect(classifyOutcome({ nodeId: 'ask', nodeType: 'llm', capabilities: configured().capabilities ?? {}, result }).kind).toBe('error');
  });

  it('throws TransientError when the API cannot be reached', async () => {
    const gone = await startFakeAnthropic();
    await gone.close();
    await expect(runWithParams(runnerWith({ apiKey: 'k', baseURL: gone.baseURL }), { prompt: 'x' }, context)).rejects.toBeInstanceOf(TransientError);
  });

  it('fails with a non-repairable configuration error naming ANTHROPIC_API_KEY before any request when no key is set', async () => {
    const before = fake.calls.length;
    const attempt = runWithParams(
      makeLlmRunner({ config: envLlmConfig({ ANTHROPIC_BASE_URL: fake.baseURL }), client: makeAnthropicLlmClient() }),
      { prompt: 'x' },
      context,
    );
    await expect(attempt).rejects.toBeInstanceOf(ConfigurationError);
    const error = (await attempt.then(
      () => undefined,
      (e: unknown) => e,
    )) as ConfigurationError;
    expect(error.message).toContain('ANTHROPIC_API_KEY');
    expect(fake.calls.length).toBe(before);
    const outcome = classifyOutcome({ nodeId: 'ask', nodeType: 'llm', taskError: { Error: error.name, Cause: error.message } });
    expect(outcome).toMatchObject({
      kind: 'fatal',
      error: { category: 'non_repairable', fixable: false, message: expect.stringContaining('ANTHROPIC_API_KEY') },
    });
  });

  it('reads the environment at call time', async () => {
    const env: NodeJS.ProcessEnv = {};
    const runner = makeLlmRunner({ config: envLlmConfig(env), client: makeAnthropicLlmClient() });
    await expect(runWithParams(runner, { prompt: 'x' }, context)).rejects.toBeInstanceOf(ConfigurationError);
    env.ANTHROPIC_API_KEY = 'late-key';
    env.ANTHROPIC_BASE_URL = fake.baseURL;
    env.FLOWMEND_LLM_MODEL = 'claude-haiku-4-5-20251001';
    fake.enqueue({ text: 'ok' });
    expect(ok(await runWithParams(runner, { prompt: 'x' }, context)).outputs.response).toBe('ok');
    expect(fake.calls.at(-1)?.headers.authorization).toBe('Bearer late-key');
    expect(fake.calls.at(-1)?.body.model).toBe('claude-haiku-4-5-20251001');
  });

  it('rejects bad params as data without calling the API', async () => {
    const before = fake.calls.length;
    const result = await runWithParams(configured(), { prompt: '', temperature: 3, imgs: [] }, context);
    expect(result).toMatchObject({ kind: 'failed', error: { code: 'PARAMS_INVALID' } });
    const message = result.kind === 'failed' ? result.error.message : '';
    for (const name of ['prompt', 'temperature', 'imgs']) expect(message).toContain(name);
    expect(fake.calls.length).toBe(before);
  });

  it('is not side-effecting, and its text output is never read as an API error', async () => {
    expect(configured().sideEffects({ prompt: 'x' })).toBe(false);
    fake.enqueue({ text: '{"ok":false,"error":"channel_not_found"}' });
    const result = await runWithParams(configured(), { prompt: 'x' }, context);
    expect(classifyOutcome({ nodeId: 'ask', nodeType: 'llm', capabilities: configured().capabilities ?? {}, result })).toEqual({
      kind: 'success',
      action: 'default',
    });
  });
});

describe('llm prices', () => {
  it.each([
    ['claude-haiku-4-5', 1, 5],
    ['claude-haiku-4-5-20251001', 1, 5],
    ['claude-sonnet-4-6', 3, 15],
    ['claude-opus-4-6', 5, 25],
    ['claude-opus-4-1-20250805', 15, 75],
    ['claude-3-5-haiku-latest', 0.8, 4],
  ])('prices %s at $%d / $%d per million tokens', (model, input, output) => {
    expect(priceOf(model)).toEqual({ inputPerMTok: input, outputPerMTok: output });
  });

  it('counts cache writes and reads, and prices an unknown model at 0', () => {
    expect(costUsd('claude-haiku-4-5', { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 1_000_000, cache_read_input_tokens: 1_000_000 })).toBe(
      1.35,
    );
    expect(costUsd('gpt-x', { input_tokens: 1000, output_tokens: 1000 })).toBe(0);
  });
});
