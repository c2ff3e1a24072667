import type { CancelOutcome, ListedRun, RunReport, ValidationIssue, Wait } from '../../core/index.ts';
import { formatIssues, withFlow } from '../../core/index.ts';
import { renderWaiting, type WaitRow, waitSummary } from './render-wait.ts';

const show = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/** The closing summary of a run in text mode. */
export const renderReport = (report: RunReport): string => {
  const lines: string[] = [];
  const m = report.metrics;
  const counts = `${m.nodes_executed} executed, ${m.nodes_cached} cached`;
  if (report.status === 'succeeded') {
    lines.push(`✓ Workflow completed in ${(m.duration_ms / 1000).toFixed(2)}s (${counts})`);
    const entries = Object.entries(report.result);
    if (entries.length > 0) {
      lines.push('Result:');
      for (const [k, v] of entries) lines.push(`  ${k}: ${show(v).replace(/\n/g, '\n    ')}`);
    }
  } else if (report.status === 'failed' || report.status === 'cancelled') {
    lines.push(`✗ Workflow ${report.status} (${counts})`);
    for (const e of report.errors) {
      lines.push(`Error${e.node_id ? ` at node '${e.node_id}'` : ''} [${e.category}${e.fixable ? '' : ', not fixable by repair'}]:`);
      lines.push(`  ${e.message.replace(/\n/g, '\n  ')}`);
    }
  } else if (report.status === 'interrupted') {
    lines.push(`⏸ Run interrupted (${counts}): its execution stopped before the run ended`);
    for (const e of report.errors) lines.push(`  ${e.code}: ${e.message.replace(/\n/g, '\n  ')}`);
    lines.push(`Resume it with: flowmend resume ${report.run_id}`);
  } else if (report.status === 'waiting') {
    lines.push(...renderWaiting(report));
  } else {
    lines.push(`… Run in progress (${counts})${report.current ? `: running '${report.current.node_id}' since ${report.current.started_at}` : ''}`);
  }
  if (report.warnings.length > 0) {
    lines.push('Warnings:');
    for (const w of report.warnings) lines.push(`  ⚠ ${w.node_id ? `${w.node_id}: ` : ''}${w.message}`);
  }
  // An attempt the run gave up on is told in its error already ("(repair attempt 1 failed: ...)").
  const told = (reason: string): boolean => report.errors.some((e) => e.message.includes(reason.split('\n')[0] ?? reason));
  for (const r of report.repairs) {
    if (r.outcome !== 'applied' && told(r.reason)) continue;
    const cost = r.source === 'llm' ? ` (${r.tokens.input}+${r.tokens.output} tokens, $${r.cost_usd.toFixed(4)})` : '';
    const how = r.outcome === 'applied' ? `by ${r.source ?? 'rules'}` : `${r.outcome}${r.source ? ` (${r.source})` : ''}`;
    lines.push(`Repair ${r.attempt} ${how}${cost}: ${r.outcome === 'applied' ? r.reason : (r.reason.split('\n')[0] ?? '')}`);
    for (const d of r.diff) lines.push(`    ${d}`);
  }
  if (m.llm.input_tokens + m.llm.output_tokens > 0)
    lines.push(`LLM: ${m.llm.input_tokens} input + ${m.llm.output_tokens} output tokens, $${m.llm.cost_usd.toFixed(4)}`);
  lines.push(`Run: ${report.run_id}`);
  if (report.status === 'failed' || report.status === 'cancelled')
    lines.push(`Resume it after a fix with: flowmend resume ${report.run_id} [--workflow fixed.json]`);
  return lines.join('\n');
};

/** `flowmend status`: the report plus every step. */
export const renderStatus = (report: RunReport): string => {
  const lines = [`Run ${report.run_id} (${report.workflow}): ${report.status}`, 'Steps:'];
  for (const s of report.steps) {
    const mark = s.cached
      ? '↻ cached'
      : s.status === 'completed'
        ? `✓ ${(s.duration_ms / 1000).toFixed(1)}s`
        : s.status === 'warning'
          ? `⚠ ${s.error ?? ''}`
          : `✗ ${s.status}${s.error ? `: ${s.error.split('\n')[0]}` : ''}`;
    lines.push(
      `  ${s.node_id}... ${mark}${s.repaired ? ' [repaired]' : ''}${s.interrupted && s.status !== 'interrupted' ? ' [ran again after interruption]' : ''}`,
    );
  }
  if (report.current) lines.push(`  ${report.current.node_id}... running since ${report.current.started_at}`);
  lines.push(...renderChildren(report, '  '));
  return `${lines.join('\n')}\n${renderReport(report)}`;
};

/** Child runs under their workflow node, indented one level per nesting (as pflow indents nested progress). */
const renderChildren = (report: RunReport, indent: string): string[] =>
  (report.children ?? []).flatMap((child) => [
    `${indent}${child.node_id} -> child run ${child.run_id}: ${child.status}`,
    ...child.steps.map(
      (s) =>
        `${indent}  ${s.node_id}... ${s.cached ? '↻ cached' : s.status === 'completed' ? `✓ ${(s.duration_ms / 1000).toFixed(1)}s` : `✗ ${s.status}${s.error ? `: ${s.error.split('\n')[0]}` : ''}`}${s.repaired ? ' [repaired]' : ''}`,
    ),
    ...(child.repairs.length > 0
      ? [`${indent}  repaired ${child.repairs.length} time(s): ${child.repairs.map((r) => r.reason.split('\n')[0]).join('; ')}`]
      : []),
    ...renderChildren(child, `${indent}  `),
  ]);

/** One run as `flowmend runs --output-format json` and the API's GET /runs list it. */
export type RunRow = {
  run_id: string;
  status: string;
  workflow: string;
  created_at: string;
  nodes_executed: number;
  /** Its workflow nodes' child runs (counted among the runs listed with it). */
  children: number;
  parent_run_id?: string;
  /** What a waiting run waits for, and until when. */
  waiting?: WaitRow;
};

export const runRowOf = ({ run, children, parentRunId }: ListedRun): RunRow => ({
  run_id: run.runId,
  status: run.status,
  workflow: run.workflowName,
  created_at: new Date(run.createdAt).toISOString(),
  nodes_executed: run.metrics.nodesExecuted,
  children,
  ...(parentRunId ? { parent_run_id: parentRunId } : {}),
  ...(run.status === 'waiting' && run.wait ? { waiting: waitRowOf(run.wait) } : {}),
});

export const waitRowOf = (wait: Wait): WaitRow => ({
  kind: wait.kind,
  ...(wait.nodeId ? { node_id: wait.nodeId } : {}),
  ...(wait.until === undefined ? {} : { until: new Date(wait.until).toISOString() }),
  ...withFlow(wait),
});

/** Each child row right under its parent's (when listed), indented, so a run reads as its tree. */
const nested = (runs: readonly RunRow[]): { row: RunRow; depth: number }[] => {
  const listed = new Set(runs.map((r) => r.run_id));
  const under = new Map<string, RunRow[]>();
  for (const r of runs) if (r.parent_run_id && listed.has(r.parent_run_id)) under.set(r.parent_run_id, [...(under.get(r.parent_run_id) ?? []), r]);
  const out: { row: RunRow; depth: number }[] = [];
  const visit = (row: RunRow, depth: number): void => {
    out.push({ row, depth });
    for (const child of under.get(row.run_id) ?? []) visit(child, depth + 1);
  };
  for (const r of runs) if (!(r.parent_run_id && listed.has(r.parent_run_id))) visit(r, 0);
  return out;
};

export const renderRuns = (runs: readonly RunRow[]): string => {
  if (runs.length === 0) return 'No runs yet. Start one with: flowmend run examples/hello.json';
  const rows = nested(runs).map(({ row: r, depth }) => [
    `${'  '.repeat(depth)}${depth > 0 ? '└ ' : ''}${r.run_id}`,
    r.status,
    r.workflow,
    r.created_at,
    `${r.nodes_executed} executed`,
    r.children > 0 ? `${r.children} child run${r.children === 1 ? '' : 's'}` : '',
    r.waiting ? `waits for ${waitSummary(r.waiting)}` : '',
  ]);
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length))) ?? [];
  return rows
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
};

export const renderIssues = (issues: readonly ValidationIssue[]): string => formatIssues(issues);

/** What a cancel says became of the node in flight (`node_outcome` in JSON). */
const NODE_OUTCOME_TEXT = {
  finished: 'had finished before the cancel reached it: its result is recorded, and a resume does not run it again',
  stopped: 'was stopped (its processes killed, its request aborted): a resume runs it again, as after a crash',
  not_started: 'was waiting to start (a retry or a rate limit): it will not start, and a resume runs it',
  unconfirmed: 'was running and no process has confirmed stopping it: it is reported interrupted, and a resume runs it again',
} as const;

/** What was cut: a node, a batch part-way, or a workflow node and its child run (and what ran in it). */
const cutText = (outcome: CancelOutcome): string => {
  const node = outcome.interrupted_node;
  switch (outcome.node_outcome) {
    case 'batch_cut':
      return `batch '${node}' was cut after ${outcome.batch?.started ?? '?'} of ${outcome.batch?.total ?? '?'} items had started: a resume runs only the items that did not complete`;
    case 'child_cancelled': {
      const child = outcome.child;
      const inner =
        child?.interrupted_node && child.node_outcome ? { ...child, interrupted_node: child.interrupted_node, node_outcome: child.node_outcome } : undefined;
      const what = inner ? (inner.node_outcome === 'batch_cut' ? cutText(inner) : `its node ${cutText(inner)}`) : 'no node of it was running';
      return `'${node}' ran child run ${child?.run_id ?? '?'}, cancelled with it: ${what}`;
    }
    default:
      return `'${node}' ${NODE_OUTCOME_TEXT[outcome.node_outcome]}`;
  }
};

/** The line a cancel prints in text mode, the same for a local and a remote run. */
export const cancelLine = (runId: string, already: boolean, outcome?: CancelOutcome): string =>
  already
    ? `Run ${runId} was already cancelled`
    : `✗ Run ${runId} cancelled${outcome ? `: ${cutText(outcome)}` : ' (no node was running)'}\nResume it with: flowmend resume ${runId}`;
