// Repair corpus: every broken workflow in test/fixtures/repair through the local host (real ASL, real
// handlers, real shell processes) with the real repair handler and a fake Anthropic API answering from
// each fixture's script. Prints the share fixed by the rules alone (0 LLM calls), and LLM calls and
// prompt tokens (estimated at 4 characters per token) per workflow the LLM fixed. No assertions.
import { cpus, totalmem } from 'node:os';
import { type FixtureOutcome, loadRepairCorpus, runRepairFixture } from '../test/support/repair-corpus.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const CHARS_PER_TOKEN = 4;

const corpus = loadRepairCorpus();
const outcomes: (FixtureOutcome & { mistake: string })[] = [];
const started = performance.now();
for (const { file, fixture } of corpus) {
  const outcome = await runRepairFixture(file, fixture);
  outcomes.push({ ...outcome, mistake: fixture.mistake });
  const by = outcome.sources.length === 0 ? '-' : outcome.sources.join('+');
  console.log(`${outcome.fixed ? '✓' : '✗'} ${file.padEnd(52)} ${by.padEnd(10)} llm calls ${outcome.llmCalls}${outcome.fixed ? '' : `  ${outcome.why}`}`);
}
const elapsed = performance.now() - started;

const fixed = outcomes.filter((o) => o.fixed);
const byRules = fixed.filter((o) => o.llmCalls === 0 && o.sources.every((s) => s === 'rules'));
const byLlm = fixed.filter((o) => o.llmCalls > 0);
/** Mistakes that are typos of a name that exists (keys, case, ids, params, types) or a path one level off. */
const TYPO_MISTAKES = new Set([
  'wrong output key',
  'wrong case',
  'wrong node id',
  'wrong input name',
  'unknown param',
  'edge to unknown node',
  'edge from unknown node',
  'unknown node type',
  'unknown start node',
  'wrong JSON path',
]);
const keyTypos = outcomes.filter((o) => TYPO_MISTAKES.has(o.mistake));
const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
const per = (total: number, n: number): string => (n === 0 ? '-' : (total / n).toFixed(1));
const pct = (n: number, d: number): string => `${d === 0 ? 0 : Math.round((100 * n) / d)}%`;

console.log('');
console.log(`workflows                      ${outcomes.length}`);
console.log(`fixed                          ${fixed.length} (${pct(fixed.length, outcomes.length)})`);
console.log(`fixed by the rules alone       ${byRules.length} (${pct(byRules.length, outcomes.length)} of all, 0 LLM calls)`);
console.log(`typo cases fixed by the rules  ${keyTypos.filter((o) => byRules.includes(o)).length}/${keyTypos.length}`);
console.log(`fixed with the LLM             ${byLlm.length}`);
console.log(`LLM calls per LLM-fixed wf     ${per(sum(byLlm.map((o) => o.llmCalls)), byLlm.length)}`);
console.log(`LLM calls per fixed wf (all)   ${per(sum(fixed.map((o) => o.llmCalls)), fixed.length)}`);
console.log(`prompt tokens per LLM-fixed wf ~${per(sum(byLlm.map((o) => o.promptChars)) / CHARS_PER_TOKEN, byLlm.length)}`);
console.log(`reply tokens per LLM-fixed wf  ~${per(sum(byLlm.map((o) => o.replyChars)) / CHARS_PER_TOKEN, byLlm.length)}`);
console.log(`wall time                      ${(elapsed / 1000).toFixed(1)} s (${per(elapsed, outcomes.length)} ms per workflow)`);
console.log(
  `machine                        ${cpus()[0]?.model ?? 'unknown'} x${cpus().length}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}`,
);
