import type { RunItem, RunReport, ValidationIssue } from '../../core/index.ts';
import { formatIssues } from '../../core/index.ts';

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
  } else {
    lines.push(`… Run in progress (${counts})${report.current ? `: running '${report.current.node_id}' since ${report.current.started_at}` : ''}`);
  }
  if (report.warnings.length > 0) {
    lines.push('Warnings:');
    for (const w of report.warnings) lines.push(`  ⚠ ${w.node_id ? `${w.node_id}: ` : ''}${w.message}`);
  }
  for (const r of report.repairs) {
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
    lines.push(`  ${s.node_id}... ${mark}${s.repaired ? ' [repaired]' : ''}${s.interrupted ? ' [ran again after interruption]' : ''}`);
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

export const renderRuns = (runs: readonly RunItem[]): string => {
  if (runs.length === 0) return 'No runs yet. Start one with: flowmend run examples/hello.json';
  const rows = runs.map((r) => [r.runId, r.status, r.workflowName, new Date(r.createdAt).toISOString(), `${r.metrics.nodesExecuted} executed`]);
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
