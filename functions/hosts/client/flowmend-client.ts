// `flowmend/client`: the typed client of the flowmend API, for `flowmend serve` and for the deployed REST API.
// Every request goes through the CLI's own ApiClient (JSON, errors as ApiCallError, SigV4 for API Gateway).
import type { CancelledStep, ProgressEvent, RunReport, RunStatus, RunWorkflow } from '../../core/index.ts';
import { ApiCallError, ApiClient, makeSigV4Signer, type RequestSigner, type SigningCredentials } from '../cli/api-client.ts';

export type { CancelledStep, ProgressEvent, RequestSigner, RunReport, RunStatus, RunWorkflow, SigningCredentials };
export { ApiCallError };

export interface FlowmendClientOptions {
  /** The API's base URL: `http://127.0.0.1:8080` for `flowmend serve`, the stack's `ApiUrl` output on AWS. */
  url: string;
  /** A `serve --allow-remote`'s token (FLOWMEND_API_TOKEN), sent as a Bearer token. */
  token?: string;
  /**
   * How requests are signed. `auto` (the default): SigV4 when the URL is API Gateway's (execute-api, or an
   * emulated stage URL), with the default AWS credential chain; none for `serve`. `false`: never signed.
   * An object: SigV4 for that region, with these credentials (else the default chain).
   */
  sigv4?: 'auto' | false | { region: string; credentials?: SigningCredentials };
  /** Any signer of your own (it gets the method, URL, headers and body, and returns the headers to send). */
  signer?: RequestSigner;
}

/** A workflow: its JSON (an object) or the text of a pflow `.pflow.md` file. */
export type WorkflowSource = Record<string, unknown> | string;

export interface StartRunRequest {
  /** An inline workflow; or give `workflowName` to run a registered one. */
  workflow?: WorkflowSource;
  workflowName?: string;
  /** A registered workflow's version (its latest by default). */
  version?: number;
  /** What runs of an inline workflow are listed under. */
  name?: string;
  params?: Record<string, unknown>;
  /** Automatic repair (default true). */
  repair?: boolean;
  maxRepairs?: number;
  mode?: 'express' | 'standard';
  /** Starts at most one run per key (a retried request answers the first run, `replayed: true`). */
  idempotencyKey?: string;
  /** Gated nodes (`"approval": "required"`) approved in advance for this run. */
  autoApprove?: string[];
  /** Which repairs wait for a person's approval: none (default), an LLM's, or all. */
  repairApproval?: RepairApproval;
  /** Reuse no memo-cache entry (pflow's --no-cache). */
  noCache?: boolean;
}

export type RepairApproval = 'none' | 'llm' | 'all';

export interface ResumeOptions {
  /** A patched workflow to continue with (it may not undo a node with side effects that already ran). */
  workflow?: WorkflowSource;
  repair?: boolean;
  maxRepairs?: number;
  repairApproval?: RepairApproval;
  noCache?: boolean;
}

export interface ApproveOptions {
  comment?: string;
  /** The wait the answer is for (`report.waiting.wait_id`): an answer meant for an earlier wait is then refused. */
  waitId?: string;
  /** Who answers, as the run's events record it (`api` by default). */
  by?: string;
}

export interface AnsweredWait {
  run_id: string;
  /** The answer recorded (a gate's or a held repair's). */
  answered: 'approved' | 'denied';
  wait: { kind: string; wait_id: string };
  /** The run went on (an execution took it) once answered. */
  continued: boolean;
}

export interface StartedRun {
  run_id: string;
  status: 'running';
  workflow: string;
  workflow_version?: number;
  replayed: boolean;
}

export interface RunSummary {
  run_id: string;
  status: RunStatus;
  workflow: string;
  workflow_version?: number;
  created_at: string;
  updated_at: string;
  nodes_executed: number;
  children: number;
  parent_run_id?: string;
}

export interface RunList {
  runs: RunSummary[];
  /** Pass it as `cursor` for the next (older) page. */
  next_cursor?: string;
}

export interface EventsPage {
  run_id: string;
  status: RunStatus;
  events: ProgressEvent[];
  /** Pass it as `after` to read on from here. */
  cursor: string;
  /** More events are already there (read again at once). */
  more: boolean;
}

export interface CancelledRun {
  run_id: string;
  status: 'cancelled';
  already_cancelled: boolean;
  interrupted_node?: string;
  node_outcome?: CancelledStep;
}

export interface RegisteredWorkflow {
  name: string;
  version: number;
  created_at: string;
  warnings: unknown[];
}

export interface ScheduleRequest {
  /** `cron(...)`, `rate(...)` or `at(...)`, as EventBridge Scheduler reads them. */
  expression: string;
  timezone?: string;
  params?: Record<string, unknown>;
  enabled?: boolean;
}

export interface ScheduleView {
  workflow: string;
  expression: string;
  timezone: string;
  params: Record<string, unknown>;
  enabled: boolean;
  created_at: string;
  updated_at: string;
  next_fire_times: string[];
}

/** Seconds one long-poll of the events waits on the API (API Gateway cuts a request at 29 s). */
const LONG_POLL_S = 10;
/** How often `wait` reads a run whose wait is answered until an execution takes it on. */
const ANSWERED_POLL_MS = 200;

const path = (...parts: string[]) => parts.map(encodeURIComponent).join('/');

/** A client of the flowmend API (`flowmend serve` or the deployed REST API). Errors are `ApiCallError`s. */
export class FlowmendClient {
  private readonly api: ApiClient;

  constructor(options: FlowmendClientOptions) {
    const url = options.url.replace(/\/+$/, '');
    const { sigv4 = 'auto' } = options;
    const signer: RequestSigner | undefined =
      options.signer ??
      (sigv4 === false ? async ({ headers }) => headers : sigv4 === 'auto' ? undefined : lazySigner(() => makeSigV4Signer(sigv4.region, sigv4.credentials)));
    this.api = new ApiClient(url, options.token, signer);
  }

  /** Starts a run of an inline or registered workflow; it goes on in the background (`wait` or `follow` it). */
  start(request: StartRunRequest): Promise<StartedRun> {
    const { workflow, workflowName, version, name, params, repair, maxRepairs, mode, idempotencyKey, autoApprove, repairApproval, noCache } = request;
    const body = {
      ...(workflow === undefined ? {} : { workflow }),
      ...(workflowName === undefined ? {} : { workflow_name: workflowName }),
      ...(version === undefined ? {} : { version }),
      ...(name === undefined ? {} : { name }),
      ...(params === undefined ? {} : { params }),
      ...(repair === undefined ? {} : { repair }),
      ...(maxRepairs === undefined ? {} : { max_repairs: maxRepairs }),
      ...(mode === undefined ? {} : { mode }),
      ...(autoApprove === undefined ? {} : { auto_approve: autoApprove }),
      ...(repairApproval === undefined ? {} : { repair_approval: repairApproval }),
      ...(noCache === undefined ? {} : { no_cache: noCache }),
    };
    return this.api.call('POST', '/runs', { body, ...(idempotencyKey === undefined ? {} : { headers: { 'idempotency-key': idempotencyKey } }) });
  }

  /** The run's report: status, result, errors, steps, repairs and metrics (what `flowmend status --output-format json` prints). */
  get(runId: string): Promise<RunReport> {
    return this.api.call('GET', `/runs/${path(runId)}`);
  }

  /** The run's current workflow (a repaired version included), its version and where it came from: the base of a patch for `resume`. */
  runWorkflow(runId: string): Promise<RunWorkflow> {
    return this.api.call('GET', `/runs/${path(runId)}/workflow`);
  }

  /** Runs, newest first. */
  list(query: { workflow?: string; status?: RunStatus; limit?: number; cursor?: string; includeChildren?: boolean } = {}): Promise<RunList> {
    const search = new URLSearchParams({
      ...(query.workflow === undefined ? {} : { workflow: query.workflow }),
      ...(query.status === undefined ? {} : { status: query.status }),
      ...(query.limit === undefined ? {} : { limit: String(query.limit) }),
      ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
      ...(query.includeChildren ? { include: 'children' } : {}),
    });
    const text = search.toString();
    return this.api.call('GET', `/runs${text ? `?${text}` : ''}`);
  }

  /** One page of a run's progress events after `after`; `wait` seconds (at most 20) long-polls for new ones. */
  events(runId: string, options: { after?: string; limit?: number; wait?: number } = {}): Promise<EventsPage> {
    const search = new URLSearchParams({
      limit: String(options.limit ?? 500),
      wait: String(options.wait ?? 0),
      ...(options.after === undefined ? {} : { after: options.after }),
    });
    return this.api.call('GET', `/runs/${path(runId)}/events?${search}`);
  }

  /** The run's events as they happen (long-polling), until the run stops running: it ended, or it waits (approve it, then follow on). */
  async *follow(runId: string, options: { after?: string } = {}): AsyncGenerator<ProgressEvent, RunStatus> {
    let after = options.after;
    for (;;) {
      const page = await this.events(runId, { wait: LONG_POLL_S, ...(after === undefined ? {} : { after }) });
      yield* page.events;
      after = page.cursor;
      if (!page.more && page.status !== 'running') return page.status;
    }
  }

  /**
   * Follows the run until it stops and returns its report: it ended, or it waits for an answer (`status:
   * 'waiting'`, `waiting` says for what). A wait already answered (approve, deny) is followed on through.
   */
  async wait(runId: string): Promise<RunReport> {
    for (;;) {
      for await (const _ of this.follow(runId)) {
        // Only the end matters here.
      }
      const report = await this.get(runId);
      // Running again since the last page (an answer was taken up): follow on.
      if (report.status === 'running') continue;
      if (report.status !== 'waiting' || report.waiting?.answer === undefined) return report;
      // Answered, and no execution has taken the run on yet.
      await new Promise((resolve) => setTimeout(resolve, ANSWERED_POLL_MS));
    }
  }

  /** Continues a failed, interrupted or cancelled run from where it stopped, optionally with a patched workflow. */
  resume(runId: string, options: ResumeOptions = {}): Promise<{ run_id: string; status: 'running' }> {
    const body = {
      ...(options.workflow === undefined ? {} : { workflow: options.workflow }),
      ...(options.repair === undefined ? {} : { repair: options.repair }),
      ...(options.maxRepairs === undefined ? {} : { max_repairs: options.maxRepairs }),
      ...(options.repairApproval === undefined ? {} : { repair_approval: options.repairApproval }),
      ...(options.noCache === undefined ? {} : { no_cache: options.noCache }),
    };
    return this.api.call('POST', `/runs/${path(runId)}/resume`, { body });
  }

  /** Approves what a `waiting` run waits for: a gated node, or a repair held for approval. The run goes on. */
  approve(runId: string, options: ApproveOptions = {}): Promise<AnsweredWait> {
    return this.answer(runId, false, options);
  }

  /** Denies a gated node (it fails, and the run with it) or rejects a held repair. */
  deny(runId: string, options: ApproveOptions = {}): Promise<AnsweredWait> {
    return this.answer(runId, true, options);
  }

  private answer(runId: string, deny: boolean, options: ApproveOptions): Promise<AnsweredWait> {
    const body = {
      deny,
      ...(options.comment === undefined ? {} : { comment: options.comment }),
      ...(options.waitId === undefined ? {} : { wait_id: options.waitId }),
    };
    return this.api.call('POST', `/runs/${path(runId)}/approve`, { body, ...(options.by === undefined ? {} : { headers: { 'x-flowmend-user': options.by } }) });
  }

  /** Cancels a run (the node in flight is stopped). */
  cancel(runId: string): Promise<CancelledRun> {
    return this.api.call('POST', `/runs/${path(runId)}/cancel`, { body: {} });
  }

  /** Registers a new version of a workflow under `name` (validated first). */
  registerWorkflow(name: string, workflow: WorkflowSource): Promise<RegisteredWorkflow> {
    return this.api.call('PUT', `/workflows/${path(name)}`, { body: workflow });
  }

  getWorkflow(name: string, version?: number): Promise<{ name: string; version: number; created_at: string; workflow: unknown }> {
    return this.api.call('GET', `/workflows/${path(name)}${version === undefined ? '' : `?version=${version}`}`);
  }

  listWorkflows(): Promise<{ workflows: { name: string; latest_version: number; updated_at: string; description?: string }[] }> {
    return this.api.call('GET', '/workflows');
  }

  deleteWorkflow(name: string): Promise<void> {
    return this.api.call('DELETE', `/workflows/${path(name)}`);
  }

  /** Schedules runs of a registered workflow (one schedule per workflow; setting it again replaces it). */
  setSchedule(workflowName: string, schedule: ScheduleRequest): Promise<ScheduleView> {
    return this.api.call('PUT', `/workflows/${path(workflowName)}/schedule`, { body: schedule });
  }

  getSchedule(workflowName: string): Promise<ScheduleView> {
    return this.api.call('GET', `/workflows/${path(workflowName)}/schedule`);
  }

  deleteSchedule(workflowName: string): Promise<void> {
    return this.api.call('DELETE', `/workflows/${path(workflowName)}/schedule`);
  }
}

/** A signer made on first use (the AWS SDK's credential chain loads only when a request is signed). */
const lazySigner = (make: () => Promise<RequestSigner>): RequestSigner => {
  let signer: Promise<RequestSigner> | undefined;
  return async (request) => {
    signer ??= make();
    return (await signer)(request);
  };
};
