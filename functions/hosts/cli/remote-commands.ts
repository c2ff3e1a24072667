import type { CancelOutcome, ProgressEvent, RunReport, RunStatus, RunWorkflow } from '../../core/index.ts';
import { ApiCallError, ApiClient } from './api-client.ts';
import type { Command } from './cli-args.ts';
import { type CliIo, type CliOutput, EXIT } from './cli-output.ts';
import { routeStdin, stdoutOutput } from './pflow-stdio.ts';
import { progressLines } from './progress-lines.ts';
import { cancelLine, type RunRow, renderIssues, renderRuns, renderStatus } from './render.ts';
import { approver } from './wait-commands.ts';
import { loadWorkflowFile } from './workflow-file.ts';

/** Seconds one long-poll of the events waits on the API (API Gateway cuts a request at 29 s). */
const LONG_POLL_S = 10;
/** Polls before a follower gives up on a run that never ends (10 s each: about 3 days). */
const MAX_POLLS = 25_000;

interface EventsPage {
  status: RunStatus;
  events: ProgressEvent[];
  cursor: string;
  more: boolean;
}

/**
 * Reads a run's progress after `cursor` page by page, handing each event to `onEvent`; with `follow`,
 * long-polls until the run is no longer running. Returns the last status and cursor.
 */
export const followRemote = async (
  api: ApiClient,
  runId: string,
  onEvent: (event: ProgressEvent) => void,
  follow: boolean,
  cursor?: string,
): Promise<{ status: RunStatus; cursor: string | undefined }> => {
  let after = cursor;
  for (let poll = 0; poll < MAX_POLLS; poll += 1) {
    const query = new URLSearchParams({ limit: '500', wait: follow ? String(LONG_POLL_S) : '0', ...(after ? { after } : {}) });
    const page = await api.call<EventsPage>('GET', `/runs/${encodeURIComponent(runId)}/events?${query}`);
    page.events.forEach(onEvent);
    after = page.cursor;
    if (page.more) continue;
    if (!follow || page.status !== 'running') return { status: page.status, cursor: after };
  }
  return { status: 'running', cursor: after };
};

const printer = (print: ((text: string) => void) | undefined) => (event: ProgressEvent) => {
  for (const line of progressLines(event)) print?.(`${line}\n`);
};

const waitForEnd = async (api: ApiClient, runId: string, print: ((text: string) => void) | undefined, cursor?: string): Promise<RunReport> => {
  await followRemote(api, runId, printer(print), true, cursor);
  return api.call<RunReport>('GET', `/runs/${encodeURIComponent(runId)}`);
};

/** How long a client waits between reads of a run whose answered wait no execution has taken yet. */
const ANSWERED_POLL_MS = 200;

/**
 * After an answer: the run stays `waiting` until an execution takes it (its `run_woken` event for that
 * wait), then it is followed to its end, or to its next wait.
 */
const waitPastWait = async (
  api: ApiClient,
  runId: string,
  waitId: string,
  print: ((text: string) => void) | undefined,
  cursor?: string,
): Promise<RunReport> => {
  let after = cursor;
  const show = printer(print);
  for (let poll = 0; poll < MAX_POLLS; poll += 1) {
    let woken = false;
    const page = await followRemote(
      api,
      runId,
      (event) => {
        show(event);
        if (event.type === 'run_woken' && event.data?.waitId === waitId) woken = true;
      },
      false,
      after,
    );
    after = page.cursor;
    if (woken || (page.status !== 'waiting' && page.status !== 'running')) return waitForEnd(api, runId, print, after);
    await new Promise((done) => setTimeout(done, ANSWERED_POLL_MS));
  }
  return api.call<RunReport>('GET', `/runs/${encodeURIComponent(runId)}`);
};

type RemoteCommand = Extract<Command, { name: 'run' | 'resume' | 'approve' | 'status' | 'show' | 'runs' | 'cancel' | 'logs' }>;

/** The commands that take `--api`: the same output and exit codes as locally, from the API. */
export const runRemoteCommand = async (command: RemoteCommand & { apiUrl: string }, io: CliIo, out: CliOutput): Promise<number> => {
  const api = new ApiClient(command.apiUrl, io.env.FLOWMEND_API_TOKEN);
  const print = out.json ? undefined : (text: string) => io.stdout(text);
  try {
    switch (command.name) {
      case 'run': {
        const loaded = await loadWorkflowFile(command.workflowPath);
        if (!loaded.ok) return out.fail(EXIT.usage, `invalid workflow ${command.workflowPath}:\n${renderIssues(loaded.issues)}`, { issues: loaded.issues });
        const streamed = stdoutOutput(loaded.workflow);
        const started = await api.call<{ run_id: string }>('POST', '/runs', {
          body: {
            workflow: loaded.workflow,
            name: loaded.name,
            params: routeStdin(loaded.workflow, command.params, io.readStdin),
            repair: command.repair,
            ...(command.maxRepairs === undefined ? {} : { max_repairs: command.maxRepairs }),
            ...(command.autoApprove.length > 0 ? { auto_approve: command.autoApprove } : {}),
            ...(command.repairApproval ? { repair_approval: command.repairApproval } : {}),
            ...(command.noCache ? { no_cache: true } : {}),
          },
        });
        // A `stdout: true` output keeps stdout for its value: progress goes to stderr.
        const progressTo = print && streamed !== undefined ? (text: string) => io.stderr(text) : print;
        return out.emit(await waitForEnd(api, started.run_id, progressTo), streamed);
      }
      case 'resume': {
        let workflow: unknown;
        if (command.workflowPath !== undefined) {
          const loaded = await loadWorkflowFile(command.workflowPath);
          if (!loaded.ok) return out.fail(EXIT.usage, `invalid workflow ${command.workflowPath}:\n${renderIssues(loaded.issues)}`, { issues: loaded.issues });
          workflow = loaded.workflow;
        }
        // Only what the resume adds is printed, as a local resume does.
        const { cursor } = await followRemote(api, command.runId, () => {}, false);
        await api.call('POST', `/runs/${encodeURIComponent(command.runId)}/resume`, {
          body: {
            ...(workflow === undefined ? {} : { workflow }),
            ...(command.repair === undefined ? {} : { repair: command.repair }),
            ...(command.maxRepairs === undefined ? {} : { max_repairs: command.maxRepairs }),
            ...(command.repairApproval ? { repair_approval: command.repairApproval } : {}),
            ...(command.noCache === undefined ? {} : { no_cache: command.noCache }),
          },
        });
        return out.emit(await waitForEnd(api, command.runId, print, cursor));
      }
      case 'approve': {
        const { cursor } = await followRemote(api, command.runId, () => {}, false);
        const answered = await api.call<{ wait: { wait_id: string } }>('POST', `/runs/${encodeURIComponent(command.runId)}/approve`, {
          body: { deny: command.deny, ...(command.comment === undefined ? {} : { comment: command.comment }) },
          headers: { 'x-flowmend-user': approver() },
        });
        return out.emit(await waitPastWait(api, command.runId, answered.wait.wait_id, print, cursor));
      }
      case 'status': {
        const report = await api.call<RunReport>('GET', `/runs/${encodeURIComponent(command.runId)}`);
        io.stdout(out.json ? `${JSON.stringify(report, null, 2)}\n` : `${renderStatus(report)}\n`);
        return EXIT.ok;
      }
      case 'show': {
        const current = await api.call<RunWorkflow>('GET', `/runs/${encodeURIComponent(command.runId)}/workflow`);
        io.stdout(out.json ? `${JSON.stringify({ success: true, ...current }, null, 2)}\n` : `${JSON.stringify(current.workflow, null, 2)}\n`);
        return EXIT.ok;
      }
      case 'runs': {
        const { runs } = await api.call<{ runs: RunRow[] }>(
          'GET',
          `/runs?limit=${Math.min(100, Math.max(1, command.limit))}${command.all ? '&include=children' : ''}${command.status ? `&status=${command.status}` : ''}`,
        );
        const rows = runs.map((r) => ({
          run_id: r.run_id,
          status: r.status,
          workflow: r.workflow,
          created_at: r.created_at,
          nodes_executed: r.nodes_executed,
          children: r.children ?? 0,
          ...(r.parent_run_id ? { parent_run_id: r.parent_run_id } : {}),
          ...(r.waiting ? { waiting: r.waiting } : {}),
        }));
        io.stdout(out.json ? `${JSON.stringify({ success: true, runs: rows }, null, 2)}\n` : `${renderRuns(rows)}\n`);
        return EXIT.ok;
      }
      case 'cancel': {
        const result = await api.call<{ run_id: string; status: string; already_cancelled: boolean } & Partial<CancelOutcome>>(
          'POST',
          `/runs/${encodeURIComponent(command.runId)}/cancel`,
        );
        const { interrupted_node, node_outcome } = result;
        const outcome = interrupted_node && node_outcome ? { ...result, interrupted_node, node_outcome } : undefined;
        io.stdout(
          out.json ? `${JSON.stringify({ success: true, ...result }, null, 2)}\n` : `${cancelLine(command.runId, result.already_cancelled, outcome)}\n`,
        );
        return EXIT.ok;
      }
      case 'logs': {
        if (out.json) {
          const events: ProgressEvent[] = [];
          const { status } = await followRemote(api, command.runId, (e) => events.push(e), command.follow);
          io.stdout(`${JSON.stringify({ success: true, run_id: command.runId, status, events }, null, 2)}\n`);
        } else {
          await followRemote(
            api,
            command.runId,
            printer((text) => io.stdout(text)),
            command.follow,
          );
        }
        return EXIT.ok;
      }
    }
  } catch (error) {
    if (!(error instanceof ApiCallError)) throw error;
    // 4xx: the request was wrong (bad workflow, unknown run): a usage error, as locally. A busy run failed.
    const code = error.status === 409 || error.status === 0 || error.status >= 500 ? EXIT.failed : EXIT.usage;
    return out.fail(code, error.message, { code: error.code, ...(Object.keys(error.details).length ? { details: error.details } : {}) });
  }
};
