import type { RunView } from './api-client.ts';
import { formatUsd, h } from './dom.ts';

/** A diff line `path: before -> after` shown with the old value struck out and the new one marked inserted. */
export const diffLine = (line: string): HTMLElement => {
  const match = /^(.*?): (.*) -> (.*)$/s.exec(line);
  if (!match) return h('span', { class: 'diff-line' }, line, '\n');
  const [, path = '', before = '', after = ''] = match;
  return h('span', { class: 'diff-line' }, h('span', { class: 'diff-path' }, `${path}: `), h('del', {}, before), ' → ', h('ins', {}, after), '\n');
};

/** Each version of the run's workflow: where it came from, why, what it changed, and what the repair cost. */
export const renderRepairs = (view: RunView, chosen: number | undefined, onChoose: (version: number | undefined) => void): HTMLElement => {
  const repairs = view.versions.filter((v) => v.source !== 'original');
  const m = view.report.metrics;
  return h(
    'section',
    { class: 'panel repairs', 'aria-labelledby': 'repairs-title' },
    h('h2', { id: 'repairs-title' }, `Workflow versions (${repairs.length} repair${repairs.length === 1 ? '' : 's'})`),
    h(
      'p',
      { class: 'totals' },
      `Repairs: ${m.repair.input_tokens + m.repair.output_tokens} tokens, ${formatUsd(m.repair.cost_usd)} · `,
      `llm nodes: ${m.llm.input_tokens + m.llm.output_tokens} tokens, ${formatUsd(m.llm.cost_usd)} · `,
      h('strong', {}, `run total ${formatUsd(m.total_cost_usd)}`),
    ),
    h(
      'ol',
      { class: 'versions' },
      ...view.versions.map((v) => {
        const isChosen = chosen === v.version;
        return h(
          'li',
          { class: `version source-${v.source}${isChosen ? ' chosen' : ''}`, 'data-version': v.version },
          h(
            'div',
            { class: 'version-head' },
            h('span', { class: 'version-number' }, `v${v.version}`),
            h('span', { class: `source-tag source-${v.source}` }, v.source),
            v.state ? h('span', { class: `state-tag state-${v.state}` }, v.state === 'held' ? 'waiting for approval' : 'rejected') : null,
            h('span', { class: 'reason' }, v.reason),
            v.source !== 'original'
              ? h(
                  'button',
                  {
                    type: 'button',
                    class: 'show-changes',
                    'aria-pressed': isChosen ? 'true' : 'false',
                    onclick: () => onChoose(isChosen ? undefined : v.version),
                  },
                  isChosen ? 'Hide changed nodes' : `Show changed nodes (${v.nodes_changed.join(', ') || 'none'})`,
                )
              : null,
          ),
          v.source !== 'original'
            ? h(
                'p',
                { class: 'usage' },
                `${v.tokens.input} in + ${v.tokens.output} out tokens, ${formatUsd(v.cost_usd)} · ${new Date(v.created_at).toLocaleString()}`,
              )
            : null,
          v.diff.length > 0 ? h('pre', { class: 'diff', 'aria-label': `changes in version ${v.version}` }, ...v.diff.map(diffLine)) : null,
        );
      }),
    ),
  );
};
