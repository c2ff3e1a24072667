import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAnthropicLlmClient } from '../../functions/adapters/anthropic-llm-client.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { prepareRun } from '../../functions/core/prepare-run.ts';
import { validateWorkflow } from '../../functions/core/validate.ts';
import { loadWorkflowFile } from '../../functions/hosts/cli/workflow-file.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { makeLlmRunner } from '../../functions/nodes/llm.ts';
import { localSpecCatalog } from '../../functions/nodes/local-specs.ts';
import { shellRunner } from '../../functions/nodes/shell.ts';
import { type FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic.ts';

// pflow's prompt caching (`## Cache` chunks, `prompt_cache:` on llm nodes) through the local host and the
// fake Anthropic API: the chunks go first in the system prompt, the last one marked for the cache (issue 29).
let fake: FakeAnthropic;
let dir: string;
beforeAll(async () => {
  fake = await startFakeAnthropic();
  dir = mkdtempSync(join(tmpdir(), 'flowmend-prompt-cache-'));
});
afterAll(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

const write = (name: string, cache: string[], readers: string[][]): string => {
  const path = join(dir, name);
  const steps = readers.flatMap((names, i) => [
    `### reader-${i}`,
    'Reads the shared context.',
    '- type: llm',
    '- system: Be brief.',
    `- prompt_cache: [${names.join(', ')}]`,
    `- prompt: Question ${i}`,
  ]);
  writeFileSync(
    path,
    [
      '# Cached',
      '',
      '## Cache',
      '',
      'Shared analysis for every reader.',
      '',
      ...cache,
      '',
      '## Steps',
      '### extract',
      'Makes the context.',
      '- type: llm',
      '- prompt: Analyse it',
      '### facts',
      'Lists facts.',
      '- type: shell',
      '- command: echo fact-one',
      ...steps,
    ].join('\n'),
  );
  return path;
};

const TWO_CHUNKS = ['- ttl: 1h', '', '```cache', 'The analysis:', '${extract.response}', 'The facts:', '${facts.stdout}', '```'];

describe("pflow's prompt caching", () => {
  it('sends the named chunks, resolved, before the system prompt; the last marked for the cache with its TTL', async () => {
    const loaded = await loadWorkflowFile(write('cached.pflow.md', TWO_CHUNKS, [['extract.response', 'facts.stdout'], ['facts.stdout']]));
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.issues));
    const runners = [makeLlmRunner({ config: () => ({ apiKey: 'test-key', baseURL: fake.baseURL }), client: makeAnthropicLlmClient() })];
    const prepared = prepareRun({ workflow: loaded.workflow, params: {}, repairEnabled: false, maxRepairs: 0 }, localSpecCatalog);
    if (!prepared.ok) throw new Error(prepared.message);
    fake.enqueue({ text: 'ANALYSIS' });
    fake.enqueue({ text: 'first answer', usage: { input_tokens: 7, cache_creation_input_tokens: 900 } });
    fake.enqueue({ text: 'second answer', usage: { input_tokens: 7, cache_read_input_tokens: 400 } });
    const before = fake.calls.length;
    const report = await new LocalHost({ store: new MemoryRunStore(), runners: [...runners, shellRunner], retryIntervalMs: 0 }).start({
      ...prepared.spec,
      workspace: dir,
    });
    expect(report.status).toBe('succeeded');
    const [extract, first, second] = fake.calls.slice(before).map((c) => c.body);
    expect(extract?.system).toBeUndefined();
    expect(first?.system).toEqual([
      { type: 'text', text: 'The analysis:\nANALYSIS' },
      { type: 'text', text: '\nThe facts:\nfact-one', cache_control: { type: 'ephemeral', ttl: '1h' } },
      { type: 'text', text: 'Be brief.' },
    ]);
    expect(second?.system).toEqual([
      { type: 'text', text: '\nThe facts:\nfact-one', cache_control: { type: 'ephemeral', ttl: '1h' } },
      { type: 'text', text: 'Be brief.' },
    ]);
    // Cache reads are counted and priced (haiku: $1/MTok input, $5 output; a read costs 0.1x input): (7 + 40) + 5 x 5.
    expect(report.result.usage).toMatchObject({ input_tokens: 7, cache_read_input_tokens: 400, cost_usd: 0.000072 });
  });

  it('refuses a chunk that is not declared, and chunks named out of their declared order, saying which', async () => {
    for (const [names, code] of [
      [['extract.response', 'nothing.here'], 'PROMPT_CACHE_UNKNOWN_CHUNK'],
      [['facts.stdout', 'extract.response'], 'PROMPT_CACHE_ORDER'],
    ] as const) {
      const loaded = await loadWorkflowFile(write(`bad-${code}.pflow.md`, TWO_CHUNKS, [[...names]]));
      if (!loaded.ok) throw new Error(JSON.stringify(loaded.issues));
      expect(loaded.locate(validateWorkflow(loaded.workflow, localSpecCatalog))).toContainEqual(
        expect.objectContaining({ code, severity: 'error', path: expect.stringContaining('prompt_cache') }),
      );
    }
  });
});
