import { ApiError, fetchRunView, postApproval, postRunAction, type RunView } from './api-client.ts';
import { formatMs, formatUsd, h } from './dom.ts';
import { renderGraph } from './graph-view.ts';
import { renderLegend } from './legend.ts';
import { renderNodeDetails, runHref } from './node-details.ts';
import { renderRepairs } from './repairs-panel.ts';
import { renderSteps } from './steps-panel.ts';
import { type Answer, renderWaitPanel } from './wait-panel.ts';

/** What a waiting run's status line says it waits for, by the kind of its wait. */
const WAITS_FOR: Readonly<Record<string, string>> = {
  time: 'its time',
  event: 'an event',
  slot: 'a concurrency slot',
  rate: 'a rate limit',
  debounce: 'its debounce',
};

/** How long one long-poll may wait: under API Gateway's 29 s limit. */
const WAIT_S = 20;

interface PageState {
  view: RunView | undefined;
  selected: string | undefined;
  chosenVersion: number | undefined;
  message: string | undefined;
  /** An answer is on its way: its buttons are disabled. */
  busy: boolean;
}

/** A run the page keeps following: one that moves, or waits for something that will move it. */
const isLive = (status: string): boolean => status === 'running' || status === 'waiting';
/** Cancel stops a run that is running or waiting; Resume continues one that stopped without succeeding. A succeeded run offers neither. */
const actionsFor = (status: string): ('resume' | 'cancel')[] =>
  status === 'running' || status === 'waiting' ? ['cancel'] : ['failed', 'cancelled', 'interrupted'].includes(status) ? ['resume'] : [];

/** The run page: header and actions, the graph, the selected node, the versions; follows a live run. */
export const mountRunPage = (root: HTMLElement, runId: string): (() => void) => {
  const state: PageState = { view: undefined, selected: undefined, chosenVersion: undefined, message: undefined, busy: false };
  let stopped = false;
  let abort = new AbortController();

  const render = (): void => {
    const focusedNode = (document.activeElement as Element | null)?.getAttribute?.('data-node-id') ?? undefined;
    const focusedButton = (document.activeElement as Element | null)?.getAttribute?.('data-action') ?? undefined;
    root.replaceChildren(page());
    const refocus = focusedNode
      ? root.querySelector(`.graph [data-node-id="${CSS.escape(focusedNode)}"]`)
      : focusedButton
        ? root.querySelector(`button[data-action="${CSS.escape(focusedButton)}"]`)
        : null;
    (refocus as HTMLElement | SVGElement | null)?.focus();
  };

  const act = async (action: 'resume' | 'cancel'): Promise<void> => {
    const question =
      action === 'resume'
        ? `Resume run ${runId}? Completed nodes are replayed from the record; the failed node runs again.`
        : `Cancel run ${runId}? The node in flight is reported as interrupted.`;
    if (!window.confirm(question)) return;
    state.message = `${action === 'resume' ? 'Resuming' : 'Cancelling'}…`;
    render();
    try {
      await postRunAction(runId, action);
      state.message = action === 'resume' ? 'Resumed: following the run.' : 'Cancel requested.';
    } catch (error) {
      state.message = `Could not ${action}: ${(error as Error).message}`;
    }
    render();
    follow(undefined);
  };

  const answer: Answer = async (given) => {
    const what = view()?.report.waiting?.kind === 'repair-approval' ? (given.deny ? 'Reject the repair' : 'Apply the repair') : given.deny ? 'Deny' : 'Approve';
    if (!window.confirm(`${what} for run ${runId}?`)) return;
    state.busy = true;
    state.message = `${what}…`;
    render();
    try {
      await postApproval(runId, given);
      state.message = `${what}: done; following the run.`;
    } catch (error) {
      state.message = `Could not answer: ${(error as Error).message}`;
    }
    state.busy = false;
    render();
    follow(undefined);
  };
  const view = () => state.view;

  const page = (): HTMLElement => {
    const view = state.view;
    if (!view) return h('main', { id: 'main' }, h('p', { role: 'status' }, state.message ?? 'Loading…'));
    const r = view.report;
    const highlighted = new Set(view.versions.find((v) => v.version === state.chosenVersion)?.nodes_changed ?? []);
    const selectedNode = view.graph.nodes.find((n) => n.id === state.selected);
    const issues = [...r.errors.map((e) => ({ ...e, kind: 'error' })), ...r.warnings.map((w) => ({ ...w, kind: 'warning' }))];
    return h(
      'main',
      { id: 'main', 'data-run-id': view.run_id, 'data-status': r.status },
      h(
        'p',
        {},
        h('a', { href: '/ui/' }, '← All runs'),
        r.parent
          ? h(
              'span',
              {},
              ' · ',
              h('a', { href: runHref(r.parent.run_id), 'data-parent-run': r.parent.run_id }, `↑ Parent run ${r.parent.run_id}`),
              ` (node ${r.parent.node_id})`,
            )
          : null,
      ),
      h(
        'header',
        { class: 'run-head' },
        h('h1', {}, `${r.workflow} `, h('span', { class: 'run-id' }, view.run_id)),
        h(
          'p',
          { class: `run-status status-${r.status}`, role: 'status', 'aria-live': 'polite', id: 'run-status' },
          `Status: ${r.status}${r.current ? ` (running ${r.current.node_id})` : ''}${r.waiting ? ` (${r.waiting.kind === 'repair-approval' ? 'a repair waits for approval' : `${r.waiting.node_id ?? ''} waits for ${WAITS_FOR[r.waiting.kind] ?? 'approval'}${r.waiting.flow ? ` of '${r.waiting.flow.key}'` : ''}`})` : ''}`,
        ),
        h(
          'p',
          { class: 'metrics' },
          `${r.metrics.nodes_executed} executed · ${r.metrics.nodes_cached} replayed · ${formatMs(r.metrics.duration_ms)} · ${formatUsd(r.metrics.total_cost_usd)}`,
        ),
        h(
          'div',
          { class: 'actions' },
          ...actionsFor(r.status).map((action) =>
            h('button', { type: 'button', 'data-action': action, onclick: () => void act(action) }, action === 'resume' ? 'Resume…' : 'Cancel…'),
          ),
        ),
        state.message ? h('p', { class: 'message', role: 'alert' }, state.message) : null,
      ),
      renderWaitPanel(view, (given) => void answer(given), state.busy),
      issues.length > 0
        ? h(
            'section',
            { class: 'panel issues', 'aria-labelledby': 'issues-title' },
            h('h2', { id: 'issues-title' }, 'Errors and warnings'),
            h(
              'ul',
              {},
              ...issues.map((e) =>
                h(
                  'li',
                  { class: `issue is-${e.kind}` },
                  h('strong', {}, `${e.kind} `),
                  e.node_id ? `${e.node_id}: ` : '',
                  h('span', { class: 'category' }, e.category),
                  ' ',
                  h('code', {}, e.code),
                  h('pre', {}, e.message),
                ),
              ),
            ),
          )
        : null,
      h(
        'div',
        { class: 'run-body' },
        h(
          'section',
          { class: 'panel graph-panel', 'aria-labelledby': 'graph-title' },
          h('h2', { id: 'graph-title' }, `Workflow (version ${view.versions.filter((v) => v.state === undefined).at(-1)?.version ?? 0})`),
          renderLegend(),
          h(
            'div',
            { class: 'graph-scroll' },
            renderGraph(view.graph.nodes, view.graph.edges, {
              selected: state.selected,
              highlighted,
              onSelect: (id) => {
                state.selected = id;
                render();
              },
            }),
          ),
        ),
        renderNodeDetails(selectedNode),
      ),
      renderRepairs(view, state.chosenVersion, (version) => {
        state.chosenVersion = version;
        render();
      }),
      renderSteps(view),
    );
  };

  /** Loads the view, then keeps waiting for changes while the run is live (long-poll; one request at a time). */
  const follow = (after: string | undefined): void => {
    abort.abort();
    abort = new AbortController();
    const signal = abort.signal;
    void (async () => {
      let since = after;
      let failures = 0;
      while (!stopped && !signal.aborted) {
        try {
          const view = await fetchRunView(runId, since, WAIT_S, signal);
          failures = 0;
          if (view.change !== state.view?.change) {
            state.view = view;
            if (state.message?.startsWith('Loading')) state.message = undefined;
            render();
          }
          since = view.change;
          if (!isLive(view.report.status)) return;
        } catch (error) {
          if (signal.aborted) return;
          failures += 1;
          state.message =
            error instanceof ApiError && error.status === 404 ? `No run ${runId}.` : `Lost touch with the API (${(error as Error).message}); retrying…`;
          render();
          if ((error instanceof ApiError && error.status === 404) || failures > 30) return;
          await new Promise((resolve) => setTimeout(resolve, Math.min(1000 * failures, 5000)));
        }
      }
    })();
  };

  render();
  follow(undefined);
  return () => {
    stopped = true;
    abort.abort();
  };
};
