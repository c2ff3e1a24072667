import type { RunReport, WaitFlow } from '../../core/index.ts';

/** A wait in a few words, as `flowmend runs --status waiting` lists it. */
export interface WaitRow {
  kind: string;
  node_id?: string;
  until?: string;
  flow?: WaitFlow;
}

/** `'customer-acme' (limit 2, 2 holding, 3rd in line)`: where a run stands for a slot. */
const slotLine = (flow: WaitFlow | undefined): string =>
  flow
    ? `'${flow.key}'${flow.limit === undefined ? '' : ` (limit ${flow.limit}, ${flow.holders ?? 0} holding${flow.position === undefined ? '' : `, #${flow.position} in line`})`}`
    : '';

export const waitSummary = (wait: WaitRow): string => {
  const node = wait.node_id ? ` '${wait.node_id}'` : '';
  const until = wait.until ? ` until ${wait.until}` : '';
  switch (wait.kind) {
    case 'time':
      return `time${node}${until}`;
    case 'event':
      return `event${node}${until}`;
    case 'approval':
      return `approval of${node}`;
    case 'repair-approval':
      return `approval of a repair${node ? ` of${node}` : ''}`;
    case 'slot':
      return `a concurrency slot of ${slotLine(wait.flow)}${node ? ` before${node}` : ''}`;
    case 'rate':
      return `the rate limit of '${wait.flow?.key ?? '?'}'${node ? ` before${node}` : ''}${until}`;
    case 'debounce':
      return `the debounce of '${wait.flow?.key ?? '?'}'${until}`;
    default:
      return `${wait.kind}${node}${until}`;
  }
};

const indented = (value: unknown): string[] =>
  JSON.stringify(value, null, 2)
    .split('\n')
    .map((line) => `    ${line}`);

/** What a waiting run waits for, what it shows a person, and how it goes on (text mode). */
export const renderWaiting = (report: RunReport): string[] => {
  const wait = report.waiting;
  if (!wait) return ['⏸ Run waiting'];
  const id = report.run_id;
  const lines = [`⏸ Run waiting for ${waitSummary(wait)}${wait.answer ? ` (answered: ${wait.answer.outcome}; continuing)` : ''}`];
  switch (wait.kind) {
    case 'time':
      lines.push(`It goes on when due: \`flowmend serve\` wakes it, or run \`flowmend resume ${id}\` after ${wait.until ?? 'its deadline'}`);
      break;
    case 'event':
      lines.push(
        `It goes on when an event is POSTed to its callback URL (\`flowmend serve\` takes callbacks)${wait.until ? `, or fails at ${wait.until} on a timeout` : ''}`,
      );
      break;
    case 'approval':
      lines.push(`'${wait.node_id ?? '?'}' runs with these params once approved:`, ...indented(wait.preview ?? {}));
      lines.push(`Approve: flowmend approve ${id}    Deny: flowmend approve ${id} --deny [--comment TEXT]`);
      break;
    case 'repair-approval': {
      const r = wait.repair;
      if (r) {
        const cost = r.tokens.input + r.tokens.output > 0 ? `, ${r.tokens.input}+${r.tokens.output} tokens, $${r.cost_usd.toFixed(4)}` : '';
        lines.push(`Proposed repair (workflow version ${r.version ?? '?'}, by ${r.source ?? 'rules'}${r.model ? ` ${r.model}` : ''}${cost}): ${r.reason}`);
        for (const d of r.diff) lines.push(`    ${d}`);
      }
      lines.push(`Apply it: flowmend approve ${id}    Reject it: flowmend approve ${id} --deny [--comment TEXT]`);
      break;
    }
    case 'slot':
      lines.push(
        `It goes on when a holder gives the slot back (\`flowmend serve\` starts it then)${wait.until ? `, or when a holder's lease runs out at ${wait.until}` : ''}; \`flowmend cancel ${id}\` takes it out of line`,
      );
      break;
    case 'rate':
    case 'debounce':
      lines.push(`It goes on at ${wait.until ?? 'its time'}: \`flowmend serve\` wakes it, or run \`flowmend resume ${id}\` then`);
      break;
  }
  return lines;
};
