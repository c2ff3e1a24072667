import { describe, expect, it } from 'vitest';
import { loadRepairCorpus, runRepairFixture } from '../../support/repair-corpus.ts';

const corpus = loadRepairCorpus();

describe('the repair corpus', () => {
  it('holds at least 25 broken workflows', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(25);
  });

  it.each(corpus.map(({ file, fixture }) => [file, fixture] as const))('%s is repaired as expected', async (file, fixture) => {
    const outcome = await runRepairFixture(file, fixture);
    expect(outcome.why).toBe('ok');
    expect(outcome.llmCalls).toBe(fixture.expect.llmCalls);
    expect(new Set(outcome.sources)).toEqual(new Set([fixture.expect.source]));
  });
});
