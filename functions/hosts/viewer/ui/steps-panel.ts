import type { RunView } from './api-client.ts';
import { formatMs, h } from './dom.ts';

/** Every visit in the order it happened, replays included: how the run got where it is. */
export const renderSteps = (view: RunView): HTMLElement =>
  h(
    'section',
    { class: 'panel steps', 'aria-labelledby': 'steps-title' },
    h('h2', { id: 'steps-title' }, 'Steps'),
    h(
      'table',
      { class: 'steps-table' },
      h('thead', {}, h('tr', {}, ...['#', 'node', 'status', 'action', 'duration', 'note'].map((c) => h('th', { scope: 'col' }, c)))),
      h(
        'tbody',
        {},
        ...view.report.steps.map((st) =>
          h(
            'tr',
            { class: `step status-${st.status}` },
            h('td', {}, st.seq ?? ''),
            h('td', {}, h('code', {}, st.node_id)),
            h('td', {}, st.status === 'cached' ? 'replayed' : st.status),
            h('td', {}, st.action ?? ''),
            h('td', {}, st.status === 'cached' ? '' : formatMs(st.duration_ms)),
            h(
              'td',
              {},
              [
                st.repaired ? 'repaired' : '',
                st.interrupted && st.status !== 'interrupted' ? 'ran again after an interruption' : '',
                st.error ? st.error.replace(/\s+/g, ' ').slice(0, 140) : '',
              ]
                .filter(Boolean)
                .join(' · '),
            ),
          ),
        ),
      ),
    ),
  );
