import { h } from './dom.ts';
import { STATUS_LABEL } from './graph-view.ts';

/** What the colours mean (each node also says its status in words). */
export const renderLegend = (): HTMLElement =>
  h(
    'ul',
    { class: 'legend', 'aria-label': 'Node colours' },
    ...Object.entries(STATUS_LABEL).map(([status, label]) => h('li', {}, h('span', { class: `swatch status-${status}`, 'aria-hidden': 'true' }), label)),
    h('li', {}, h('span', { class: 'swatch changed', 'aria-hidden': 'true' }), 'changed by the chosen repair'),
  );
