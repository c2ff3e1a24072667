import type { RunView } from './api-client.ts';
import { formatUsd, h } from './dom.ts';
import { diffLine } from './repairs-panel.ts';

/** What the page does with a person's answer: approve (or apply) when `deny` is false. */
export type Answer = (answer: { deny: boolean; comment: string; waitId: string }) => void;

const when = (iso: string | undefined): string => (iso ? new Date(iso).toLocaleString() : '');

/**
 * What a waiting run waits for (DESIGN 7b): a time, an event, or a person. A gate shows the node's resolved
 * params, a held repair its diff, reason, model, tokens and cost; both have Approve and Deny (Reject)
 * buttons, with an optional comment that is kept with the answer.
 */
export const renderWaitPanel = (view: RunView, onAnswer: Answer, busy: boolean): HTMLElement | null => {
  const wait = view.report.waiting;
  if (view.report.status !== 'waiting' || !wait) return null;
  const comment = h('textarea', { id: 'wait-comment', rows: 2, maxlength: 2000, placeholder: 'Optional: why (kept with the answer)' });
  const answer = (deny: boolean) => () => onAnswer({ deny, comment: comment.value.trim(), waitId: wait.wait_id });
  const buttons = (approve: string, deny: string) =>
    h(
      'div',
      { class: 'actions' },
      h('label', { for: 'wait-comment', class: 'comment-label' }, 'Comment'),
      comment,
      h('button', { type: 'button', class: 'approve', 'data-action': 'approve', disabled: busy || !!wait.answer, onclick: answer(false) }, approve),
      h('button', { type: 'button', class: 'deny', 'data-action': 'deny', disabled: busy || !!wait.answer, onclick: answer(true) }, deny),
    );
  const answered = wait.answer
    ? h('p', { class: 'answered', role: 'status' }, `Answered: ${wait.answer.outcome}${wait.answer.by ? ` by ${wait.answer.by}` : ''}; continuing…`)
    : null;
  const body: (HTMLElement | null)[] = [];
  switch (wait.kind) {
    case 'time':
      body.push(h('p', {}, `'${wait.node_id ?? ''}' waits until ${when(wait.until)}. \`flowmend serve\` (or the stack's schedule) goes on then.`));
      break;
    case 'event':
      body.push(
        h('p', {}, `'${wait.node_id ?? ''}' waits for an event on its callback URL${wait.until ? `, until ${when(wait.until)} (then it times out)` : ''}.`),
      );
      break;
    case 'approval':
      body.push(
        h('p', {}, `'${wait.node_id ?? ''}' runs with these params once approved:`),
        h('pre', { class: 'preview', 'aria-label': `params of ${wait.node_id ?? 'the node'}` }, JSON.stringify(wait.preview ?? {}, null, 2)),
        answered,
        buttons('Approve', 'Deny'),
      );
      break;
    case 'slot':
      body.push(
        h(
          'p',
          {},
          `${wait.flow?.scope === 'node' ? `'${wait.node_id ?? ''}'` : 'The run'} waits for a concurrency slot of '${wait.flow?.key ?? ''}': limit ${wait.flow?.limit ?? '?'}, ${wait.flow?.holders ?? '?'} holding, #${wait.flow?.position ?? '?'} in line${wait.until ? `; a holder's lease runs out at ${when(wait.until)}` : ''}.`,
        ),
      );
      break;
    case 'rate':
      body.push(h('p', {}, `'${wait.node_id ?? ''}' waits for the rate limit of '${wait.flow?.key ?? ''}' until ${when(wait.until)}.`));
      break;
    case 'debounce':
      body.push(
        h(
          'p',
          {},
          `The start waits out the debounce of '${wait.flow?.key ?? ''}' until ${when(wait.until)} (${wait.flow?.starts ?? 1} starts so far; the last one runs).`,
        ),
      );
      break;
    case 'repair-approval': {
      const r = wait.repair;
      body.push(
        h('p', {}, `A repair of '${wait.node_id ?? 'the workflow'}' waits for approval before it is applied.`),
        r
          ? h(
              'div',
              { class: 'held-repair' },
              h('p', { class: 'reason' }, r.reason),
              h(
                'p',
                { class: 'usage' },
                `workflow version ${r.version ?? '?'} by ${r.source ?? 'rules'}${r.model ? ` (${r.model})` : ''} · ${r.tokens.input} in + ${r.tokens.output} out tokens, ${formatUsd(r.cost_usd)}`,
              ),
              h('pre', { class: 'diff', 'aria-label': 'proposed changes' }, ...r.diff.map(diffLine)),
            )
          : null,
        answered,
        buttons('Apply repair', 'Reject'),
      );
      break;
    }
  }
  return h(
    'section',
    { class: `panel wait-panel wait-${wait.kind}`, 'aria-labelledby': 'wait-title', 'data-wait-id': wait.wait_id },
    h(
      'h2',
      { id: 'wait-title' },
      wait.kind === 'repair-approval' ? 'Repair waiting for approval' : wait.kind === 'approval' ? 'Waiting for approval' : 'Waiting',
    ),
    h('p', { class: 'since' }, `Since ${when(wait.since)}`),
    ...body,
  );
};
