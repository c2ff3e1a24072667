import type { ViewEdge, ViewNode } from './api-client.ts';
import { formatMs, s } from './dom.ts';
import { layoutGraph } from './graph-layout.ts';

const NODE_HEIGHT = 54;
const CHAR_WIDTH = 7.4;

/** What a status looks like; the word is always shown too, so colour is never the only cue. */
export const STATUS_LABEL: Record<string, string> = {
  completed: '✓ completed',
  replayed: '↻ replayed',
  running: '● running',
  waiting: '◐ waiting',
  failed: '✗ failed',
  warning: '⚠ warning',
  interrupted: '‖ interrupted',
  pending: '… pending',
  skipped: '– skipped',
};

export interface GraphOptions {
  selected: string | undefined;
  /** Nodes to ring: those the chosen repair changed. */
  highlighted: ReadonlySet<string>;
  onSelect: (nodeId: string) => void;
}

/** The second line of a node: type, status and the latest visit's duration. */
const subtitle = (n: ViewNode): string => {
  const duration = n.duration_ms !== undefined && n.status !== 'replayed' && n.status !== 'running' ? ` · ${formatMs(n.duration_ms)}` : '';
  return `${n.type} · ${STATUS_LABEL[n.status] ?? n.status}${duration}`;
};

const pathOf = (points: readonly { x: number; y: number }[]): string =>
  points.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ');

/** The workflow as an SVG graph: one focusable node per workflow node, edges labelled by their action. */
export const renderGraph = (nodes: readonly ViewNode[], edges: readonly ViewEdge[], options: GraphOptions): SVGElement => {
  const sized = nodes.map((n) => {
    const sub = subtitle(n);
    return { id: n.id, width: Math.max(140, Math.max((n.id.length + 4) * 8.4, sub.length * CHAR_WIDTH) + 28), height: NODE_HEIGHT };
  });
  const layout = layoutGraph(
    sized,
    edges.map((e) => ({ from: e.from, to: e.to, action: e.action, label: e.taken > 1 ? `${e.action} ×${e.taken}` : e.action })),
  );
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const svg = s('svg', {
    class: 'graph',
    role: 'group',
    'aria-label': 'Workflow graph: use Tab to move between nodes, Enter to show one',
    viewBox: `0 0 ${Math.ceil(layout.width)} ${Math.ceil(layout.height)}`,
    width: Math.ceil(layout.width),
    height: Math.ceil(layout.height),
  });
  svg.append(
    s(
      'defs',
      {},
      s(
        'marker',
        { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
        s('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow' }),
      ),
      s(
        'marker',
        { id: 'arrow-taken', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
        s('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow taken' }),
      ),
    ),
  );
  for (const e of layout.edges) {
    const taken = (edges.find((x) => x.from === e.from && x.to === e.to && x.action === e.action)?.taken ?? 0) > 0;
    svg.append(
      s(
        'g',
        { class: `edge${taken ? ' taken' : ''}`, 'data-from': e.from, 'data-to': e.to, 'data-action': e.action, 'data-taken': taken ? 'true' : 'false' },
        s('title', {}, `${e.from} → ${e.to} on "${e.action}"${taken ? ` (taken: ${e.label})` : ' (not taken)'}`),
        s('path', { d: pathOf(e.points), 'marker-end': taken ? 'url(#arrow-taken)' : 'url(#arrow)' }),
        s('text', { x: e.labelX, y: e.labelY + 4, 'text-anchor': 'middle', class: 'edge-label' }, e.label),
      ),
    );
  }
  for (const placed of layout.nodes.values()) {
    const n = byId.get(placed.id);
    if (!n) continue;
    const left = placed.x - placed.width / 2;
    const top = placed.y - placed.height / 2;
    const classes = ['node', `status-${n.status}`, options.selected === n.id ? 'selected' : '', options.highlighted.has(n.id) ? 'changed' : '']
      .filter(Boolean)
      .join(' ');
    const select = (): void => options.onSelect(n.id);
    svg.append(
      s(
        'g',
        {
          class: classes,
          tabindex: 0,
          role: 'button',
          'data-node-id': n.id,
          'data-status': n.status,
          'data-visits': n.visits,
          'aria-pressed': options.selected === n.id ? 'true' : 'false',
          'aria-label': `${n.id}, ${n.type} node, ${n.status}${n.visits > 1 ? `, ${n.visits} visits` : ''}${n.repaired ? ', changed by a repair' : ''}`,
          onclick: select,
          onkeydown: (event: Event) => {
            const key = (event as KeyboardEvent).key;
            if (key === 'Enter' || key === ' ') {
              event.preventDefault();
              select();
            }
          },
        },
        s('rect', { x: left, y: top, width: placed.width, height: placed.height, rx: 8 }),
        s('text', { x: left + 12, y: top + 22, class: 'node-id' }, n.id),
        s('text', { x: left + 12, y: top + 41, class: 'node-sub' }, subtitle(n)),
        n.visits > 1
          ? s(
              'g',
              { class: 'badge visits' },
              s('rect', { x: left + placed.width - 34, y: top - 9, width: 32, height: 18, rx: 9 }),
              s('text', { x: left + placed.width - 18, y: top + 4, 'text-anchor': 'middle' }, `×${n.visits}`),
            )
          : null,
        n.repaired
          ? s(
              'g',
              { class: 'badge repaired' },
              s('rect', { x: left - 2, y: top - 9, width: 68, height: 18, rx: 9 }),
              s('text', { x: left + 32, y: top + 4, 'text-anchor': 'middle' }, 'repaired'),
            )
          : null,
      ),
    );
  }
  return svg;
};
