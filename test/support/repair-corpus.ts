import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { prepareInputs } from '../../functions/core/inputs.ts';
import { WorkflowSchema } from '../../functions/core/ir.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import type { RunReport } from '../../functions/core/run-report.ts';
import * as z from '../../functions/core/zod.ts';
import { envRepairHandler } from '../../functions/hosts/lambda/repair.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { shellRunner } from '../../functions/nodes/shell.ts';
import { transformRunner } from '../../functions/nodes/transform.ts';
import { startFakeAnthropic } from './fake-anthropic.ts';

export const REPAIR_CORPUS_DIR = new URL('../fixtures/repair/', import.meta.url).pathname;

/** One broken workflow of the corpus, the check that decides whether its repair worked, and the scripted LLM replies. */
export const RepairFixtureSchema = z.strictObject({
  name: z.string(),
  mistake: z.string(),
  description: z.optional(z.string()),
  workflow: z.unknown(),
  params: z._default(z.record(z.string(), z.unknown()), {}),
  /** Who should fix it: the rules alone (0 LLM calls) or the LLM in `llmCalls` calls. */
  expect: z.strictObject({ source: z.enum(['rules', 'llm']), llmCalls: z.int().check(z.nonnegative()) }),
  /** What the fake Anthropic API answers, in order: a proposal object, or raw text. */
  llmReplies: z._default(z.array(z.union([z.string(), z.strictObject({ workflow: z.unknown(), reason: z.string() })])), []),
  /** The repaired run must succeed with this declared output value. */
  check: z.strictObject({ output: z.string(), equals: z.unknown() }),
});
export type RepairFixture = z.infer<typeof RepairFixtureSchema>;

export const loadRepairCorpus = (dir = REPAIR_CORPUS_DIR): { file: string; fixture: RepairFixture }[] =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({ file, fixture: RepairFixtureSchema.parse(JSON.parse(readFileSync(join(dir, file), 'utf8'))) }));

export interface FixtureOutcome {
  file: string;
  fixed: boolean;
  /** Sources of the repairs applied, in order ('rules' / 'llm'). */
  sources: string[];
  llmCalls: number;
  /** Characters sent (system + prompt) and received, over all calls; tokens are estimated at 4 characters each. */
  promptChars: number;
  replyChars: number;
  report: RunReport;
  why: string;
}

const textOf = (reply: RepairFixture['llmReplies'][number]): string => (typeof reply === 'string' ? reply : JSON.stringify(reply));

/** Runs one fixture through the local host with the real repair handler and the fake Anthropic API answering from its script. */
export async function runRepairFixture(file: string, fixture: RepairFixture): Promise<FixtureOutcome> {
  const fake = await startFakeAnthropic();
  try {
    for (const reply of fixture.llmReplies) fake.enqueue({ text: textOf(reply), usage: { input_tokens: 0, output_tokens: textOf(reply).length } });
    const host = new LocalHost({
      store: new MemoryRunStore(),
      runners: [shellRunner, transformRunner],
      retryIntervalMs: 0,
      makeRepairHandler: envRepairHandler({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.baseURL, FLOWMEND_REPAIR_MODEL: 'claude-haiku-4-5' }),
    });
    const workflow = WorkflowSchema.parse(fixture.workflow);
    const inputs = prepareInputs(workflow, fixture.params);
    if (!inputs.ok) throw new Error(`${file}: bad params: ${inputs.problems.map((p) => p.message).join('; ')}`);
    const report = await host.start({ workflow, workflowName: fixture.name, params: inputs.params, repairEnabled: true, maxRepairs: 3 });
    const calls = fake.calls;
    const promptChars = calls.reduce((n, c) => n + String(c.body.system ?? '').length + JSON.stringify(c.body.messages ?? []).length, 0);
    const replyChars = fixture.llmReplies.slice(0, calls.length).reduce((n, r) => n + textOf(r).length, 0);
    const value = report.result[fixture.check.output];
    const fixed = report.status === 'succeeded' && isDeepStrictEqual(value, fixture.check.equals);
    const why = fixed
      ? 'ok'
      : report.status !== 'succeeded'
        ? `run ${report.status}: ${report.errors.map((e) => e.message).join(' | ')}`
        : `output ${fixture.check.output} is ${JSON.stringify(value)}, expected ${JSON.stringify(fixture.check.equals)}`;
    return {
      file,
      fixed,
      sources: report.repairs.flatMap((r) => (r.outcome === 'applied' && r.source ? [r.source] : [])),
      llmCalls: calls.length,
      promptChars,
      replyChars,
      report,
      why,
    };
  } finally {
    await fake.close();
  }
}
