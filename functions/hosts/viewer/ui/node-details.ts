import type { ViewNode } from './api-client.ts';
import { formatMs, h } from './dom.ts';
import { STATUS_LABEL } from './graph-view.ts';

const json = (value: unknown): string => JSON.stringify(value, null, 2);

/** A run's page in the viewer. */
export const runHref = (runId: string): string => `/ui/runs/${encodeURIComponent(runId)}`;

/** The selected node: status, timings, its action, outputs (bounded and redacted by the API), and its error. */
export const renderNodeDetails = (node: ViewNode | undefined): HTMLElement => {
  if (!node)
    return h(
      'section',
      { class: 'panel node-details', 'aria-labelledby': 'node-details-title' },
      h('h2', { id: 'node-details-title' }, 'Node'),
      h('p', { class: 'muted' }, 'Select a node in the graph (click it, or Tab to it and press Enter).'),
    );
  const rows: [string, string][] = [
    ['type', node.type],
    ['status', STATUS_LABEL[node.status] ?? node.status],
    ['visits', String(node.visits)],
  ];
  if (node.seq !== undefined) rows.push(['latest step', `#${node.seq}`]);
  if (node.action) rows.push(['action taken', node.action]);
  if (node.duration_ms !== undefined) rows.push(['duration', node.status === 'replayed' ? 'replayed from the record (not run)' : formatMs(node.duration_ms)]);
  if (node.visits > 1 || node.total_duration_ms !== node.duration_ms) rows.push(['time over all visits', formatMs(node.total_duration_ms)]);
  if (node.repaired) rows.push(['repaired', 'changed by a repair of this run']);
  return h(
    'section',
    { class: 'panel node-details', 'aria-labelledby': 'node-details-title', 'data-node-id': node.id },
    h('h2', { id: 'node-details-title' }, `Node ${node.id}`),
    h('dl', {}, ...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    node.error
      ? h(
          'div',
          { class: `node-error ${node.status === 'warning' ? 'is-warning' : 'is-error'}`, role: 'note' },
          h('h3', {}, node.status === 'warning' ? 'Warning' : 'Error'),
          h('p', {}, h('span', { class: 'category' }, node.error.category ?? 'uncategorised'), ' ', h('code', {}, node.error.code)),
          h('pre', {}, node.error.message),
        )
      : null,
    node.child_runs && node.child_runs.length > 0
      ? h(
          'div',
          { class: 'child-runs' },
          h('h3', {}, node.child_runs.length === 1 ? 'Child run' : 'Child runs'),
          h('ul', {}, ...node.child_runs.map((id) => h('li', {}, h('a', { href: runHref(id), 'data-child-run': id }, id)))),
        )
      : null,
    node.outputs !== undefined
      ? h('div', { class: 'outputs' }, h('h3', {}, 'Outputs'), h('pre', { tabindex: 0, 'aria-label': `outputs of ${node.id}` }, json(node.outputs)))
      : null,
  );
};
