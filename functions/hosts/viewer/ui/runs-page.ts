import { fetchRuns } from './api-client.ts';
import { h } from './dom.ts';

const STATUSES = ['', 'running', 'succeeded', 'failed', 'cancelled'];

/** Recent runs, newest first, filtered by workflow and status (kept in the URL so a filter can be shared). */
export const mountRunsPage = (root: HTMLElement): void => {
  const params = new URLSearchParams(location.search);
  const filter = { workflow: params.get('workflow') ?? '', status: params.get('status') ?? '' };
  const list = h('div', { 'aria-live': 'polite' }, h('p', {}, 'Loading…'));
  const apply = (event: Event): void => {
    event.preventDefault();
    const form = new FormData(event.target as HTMLFormElement);
    const next = new URLSearchParams();
    for (const key of ['workflow', 'status']) {
      const value = String(form.get(key) ?? '').trim();
      if (value) next.set(key, value);
    }
    location.search = next.toString();
  };
  root.replaceChildren(
    h(
      'main',
      { id: 'main' },
      h('h1', {}, 'Runs'),
      h(
        'form',
        { class: 'filters', onsubmit: apply, 'aria-label': 'Filter runs' },
        h('label', { for: 'f-workflow' }, 'Workflow'),
        h('input', { id: 'f-workflow', name: 'workflow', value: filter.workflow, placeholder: 'any' }),
        h('label', { for: 'f-status' }, 'Status'),
        h('select', { id: 'f-status', name: 'status' }, ...STATUSES.map((st) => h('option', { value: st, selected: st === filter.status }, st || 'any'))),
        h('button', { type: 'submit' }, 'Filter'),
      ),
      list,
    ),
  );
  fetchRuns({ ...(filter.workflow ? { workflow: filter.workflow } : {}), ...(filter.status ? { status: filter.status } : {}) })
    .then(({ runs }) => {
      // Newest first whatever order the API used; the run id starts with its creation time.
      const sorted = [...runs].sort((a, b) => b.created_at.localeCompare(a.created_at));
      list.replaceChildren(
        sorted.length === 0
          ? h('p', {}, 'No runs match.')
          : h(
              'table',
              { class: 'runs' },
              h('caption', {}, `${sorted.length} run${sorted.length === 1 ? '' : 's'}, newest first`),
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  h('th', { scope: 'col' }, 'Run'),
                  h('th', { scope: 'col' }, 'Workflow'),
                  h('th', { scope: 'col' }, 'Status'),
                  h('th', { scope: 'col' }, 'Started'),
                ),
              ),
              h(
                'tbody',
                {},
                ...sorted.map((r) =>
                  h(
                    'tr',
                    { 'data-run-id': r.run_id },
                    h('td', {}, h('a', { href: `/ui/runs/${encodeURIComponent(r.run_id)}` }, r.run_id)),
                    h('td', {}, r.workflow),
                    h('td', {}, h('span', { class: `status-tag status-${r.status}` }, r.status)),
                    h('td', {}, h('time', { datetime: r.created_at }, new Date(r.created_at).toLocaleString())),
                  ),
                ),
              ),
            ),
      );
    })
    .catch((error: Error) => list.replaceChildren(h('p', { role: 'alert' }, `Could not list runs: ${error.message}`)));
};
