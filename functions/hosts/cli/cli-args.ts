import { parseArgs } from 'node:util';
import type { RepairApproval, RunStatus } from '../../core/index.ts';
import * as z from '../../core/zod.ts';

export const USAGE = `flowmend: durable, self-healing JSON workflows

Usage:
  flowmend run <workflow.json> [name=value ...] [--no-repair] [--max-repairs N] [--no-cache] [--workspace DIR] [--mcp-config FILE] [--open]
                [--auto-approve NODE ...] [--repair-approval none|llm|all]
  flowmend resume <run-id> [--workflow patched.json] [--repair | --no-repair] [--max-repairs N] [--no-cache] [--force] [--mcp-config FILE] [--repair-approval ...]
  flowmend approve <run-id> [--deny] [--comment TEXT]
  flowmend status <run-id>
  flowmend show <run-id> --workflow
  flowmend runs [--limit N] [--all] [--status waiting|running|failed|...]
  flowmend validate <workflow.json> [--mcp-config FILE] [--online]
  flowmend cancel <run-id>
  flowmend logs <run-id> [--follow]
  flowmend serve [--port N] [--host 127.0.0.1] [--allow-remote [--token T]] [--workspace DIR] [--workers N] [--runs-at-once N] [--api URL]
  flowmend open <run-id> [--port N] [--api URL]
  flowmend init [DIR]        a new project: a workflow, its test, a CDK app (DIR: default the current one)

Every command takes:
  --output-format text|json   text progress (default) or one JSON object on stdout
  --state-dir DIR             where local runs are kept (default $FLOWMEND_STATE_DIR or ./.flowmend)
  --store sqlite|dynamodb     sqlite: <state-dir>/flowmend.db (default); dynamodb: a DynamoDB table
                              (AWS_ENDPOINT_URL for a local one, AWS_REGION otherwise)
  --table NAME                the DynamoDB table (default $FLOWMEND_TABLE or flowmend)

run, status, show, runs, resume, approve, cancel and logs take --api URL (default $FLOWMEND_API_URL) to talk to a
flowmend API (\`flowmend serve\`, or the API of a deployed stack, signed with your AWS credentials).

--workspace DIR: where file nodes read and write (default: the current directory; kept with the run;
  for serve, of every run started through it).
--no-cache: the run reuses no result from pflow's memo cache (it still keeps its own for later runs).
--workers N: serve drives runs in N worker threads, each with its own SQLite connection (default 0: in
  serve's own thread; see docs/performance.md for when more pay).
--runs-at-once N: serve drives at most N runs at once in each thread that drives them (default 100); the
  others wait their turn, in order. More for runs that mostly wait (llm, http), fewer for a quicker API.
--mcp-config FILE: MCP servers in pflow's mcp-servers.json shape (default $FLOWMEND_MCP_CONFIG,
  else ~/.pflow/mcp-servers.json when it exists).

show --workflow: prints the run's current workflow (a repaired version included) as JSON; edit it and
  give it to resume --workflow. A patch made from any earlier version of the run is carried onto the
  current one, unless it would run again a completed node with side effects.
resume --repair / --no-repair / --max-repairs N: change the run's repair settings from this resume on.

Secret inputs ("secret": true): pass them in FLOWMEND_SECRET_<NAME>, or FLOWMEND_SECRET_<NAME>_FILE (a
  file holding the value), not as name=value, which other users of the machine can read in the process list.

--auto-approve NODE: pre-approves the gate ("approval": "required") of that node for this run (repeatable).
--repair-approval: which repairs wait for \`flowmend approve\` before they apply (default: the workflow's
  "repair": {"approval": ...}, else none); approve answers whatever a run waits for (a gate, a held repair).

Exit codes: 0 success (or a run still running, with --api); 1 the run did not succeed: failed,
  cancelled or interrupted (all resumable), or the command itself failed; 2 bad usage or an invalid
  workflow; 3 a person denied a gate or rejected a repair; 4 the run is waiting (a wait, an event, an
  approval: see \`flowmend runs --status waiting\`).`;

/** A command line that does not make sense: exit code 2 with a message that says what to do. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const COMMANDS = ['run', 'resume', 'status', 'show', 'runs', 'validate', 'cancel', 'logs', 'serve', 'open', 'approve', 'init'] as const;
/** Commands that talk to an API instead of the local store when given --api or FLOWMEND_API_URL. */
export const REMOTE_COMMANDS: readonly string[] = ['run', 'resume', 'approve', 'status', 'show', 'runs', 'cancel', 'logs'];
type CommandName = (typeof COMMANDS)[number];

const OutputFormatSchema = z.enum(['text', 'json'], { error: '--output-format is "text" or "json"' });
const CountSchema = (flag: string, min = 0) =>
  z.coerce
    .number({ error: `${flag} takes a whole number, e.g. ${flag} 3` })
    .check(z.int(`${flag} takes a whole number`), z.gte(min, `${flag} takes ${min} or more`));

const StoreKindSchema = z.enum(['sqlite', 'dynamodb'], { error: '--store is "sqlite" (the default) or "dynamodb"' });
const RepairApprovalFlagSchema = z.enum(['none', 'llm', 'all'], { error: '--repair-approval is "none", "llm" (an LLM\'s patch waits for approval) or "all"' });
const StatusFlagSchema = z.enum(['running', 'waiting', 'succeeded', 'failed', 'cancelled', 'interrupted'], {
  error: '--status is one of running, waiting, succeeded, failed, cancelled, interrupted',
});

export interface CommonOptions {
  outputFormat: 'text' | 'json';
  stateDir: string;
  store: 'sqlite' | 'dynamodb';
  table: string | undefined;
  /** The API to talk to instead of the local store (remote commands only). */
  apiUrl?: string;
}

export type Command =
  | ({
      name: 'run';
      workflowPath: string;
      params: Record<string, string>;
      repair: boolean;
      maxRepairs: number | undefined;
      noCache: boolean;
      workspace: string | undefined;
      mcpConfig: string | undefined;
      open: boolean;
      port: number;
      autoApprove: string[];
      repairApproval: RepairApproval | undefined;
    } & CommonOptions)
  | ({
      name: 'resume';
      runId: string;
      workflowPath: string | undefined;
      repair: boolean | undefined;
      maxRepairs: number | undefined;
      /** true: skip memo reads from now on; undefined: as the run was started. */
      noCache: boolean | undefined;
      force: boolean;
      mcpConfig: string | undefined;
      repairApproval: RepairApproval | undefined;
    } & CommonOptions)
  | ({ name: 'approve'; runId: string; deny: boolean; comment: string | undefined } & CommonOptions)
  | ({ name: 'status'; runId: string } & CommonOptions)
  /** A part of a run; only its current workflow (`--workflow`) so far. */
  | ({ name: 'show'; runId: string; what: 'workflow' } & CommonOptions)
  | ({ name: 'runs'; limit: number; all: boolean; status: RunStatus | undefined } & CommonOptions)
  | ({ name: 'validate'; workflowPath: string; mcpConfig: string | undefined; online: boolean } & CommonOptions)
  | ({ name: 'cancel'; runId: string } & CommonOptions)
  | ({ name: 'logs'; runId: string; follow: boolean } & CommonOptions)
  | ({
      name: 'serve';
      port: number;
      host: string;
      workspace: string | undefined;
      manualClock: boolean;
      /** A --host that is not loopback: required, with a token checked on every request. */
      allowRemote: boolean;
      token: string | undefined;
      /** Worker threads that drive runs (0: serve's own thread). */
      workers: number;
      /** Runs each thread that drives runs drives at once (serve's default when undefined). */
      runsAtOnce: number | undefined;
    } & CommonOptions)
  /** The run page in the browser; with `apiUrl`, served here and forwarded to that API. */
  | ({ name: 'open'; runId: string; port: number } & CommonOptions)
  | ({ name: 'init'; dir: string } & CommonOptions)
  | { name: 'help' };

const FLAGS = {
  'output-format': { type: 'string' },
  'state-dir': { type: 'string' },
  store: { type: 'string' },
  table: { type: 'string' },
  'no-repair': { type: 'boolean' },
  /** resume: turn repair on for a run started with --no-repair. */
  repair: { type: 'boolean' },
  'max-repairs': { type: 'string' },
  /** run, resume: pflow's --no-cache (memo-cache reads skipped, writes kept). */
  'no-cache': { type: 'boolean' },
  /** resume: a patched workflow file. */
  workflow: { type: 'string' },
  /** show: the run's current workflow (`show <run-id> --workflow`, renamed by `showFlags`: a flag without a value there). */
  'show-workflow': { type: 'boolean' },
  force: { type: 'boolean' },
  /** runs: list child runs (of workflow nodes) too, not only top-level runs. */
  all: { type: 'boolean' },
  limit: { type: 'string' },
  workspace: { type: 'string' },
  'mcp-config': { type: 'string' },
  online: { type: 'boolean' },
  api: { type: 'string' },
  follow: { type: 'boolean', short: 'f' },
  port: { type: 'string' },
  host: { type: 'string' },
  'allow-remote': { type: 'boolean' },
  token: { type: 'string' },
  workers: { type: 'string' },
  'runs-at-once': { type: 'string' },
  /** serve: the scheduler ticks only on POST /_scheduler/tick (tests drive its clock). */
  'manual-clock': { type: 'boolean' },
  /** run: open the run's page in the browser. */
  open: { type: 'boolean' },
  'auto-approve': { type: 'string', multiple: true },
  'repair-approval': { type: 'string' },
  deny: { type: 'boolean' },
  comment: { type: 'string' },
  status: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Which flags each command accepts beyond the common ones. */
const ALLOWED: Record<CommandName, readonly (keyof typeof FLAGS)[]> = {
  run: ['no-repair', 'max-repairs', 'no-cache', 'api', 'workspace', 'mcp-config', 'open', 'port', 'auto-approve', 'repair-approval'],
  resume: ['repair', 'no-repair', 'max-repairs', 'no-cache', 'workflow', 'force', 'api', 'mcp-config', 'repair-approval'],
  approve: ['deny', 'comment', 'api'],
  status: ['api'],
  show: ['show-workflow', 'api'],
  runs: ['limit', 'all', 'api', 'status'],
  validate: ['mcp-config', 'online'],
  cancel: ['api'],
  logs: ['follow', 'api'],
  serve: ['port', 'host', 'manual-clock', 'workspace', 'api', 'allow-remote', 'token', 'workers', 'runs-at-once'],
  open: ['port', 'api'],
  init: [],
};

/** Where `flowmend serve` listens unless told otherwise; `open` and `run --open` look for a viewer there. */
export const DEFAULT_SERVE_PORT = 8787;

const ApiUrlSchema = z.url({ protocol: /^https?$/, error: '--api takes an http(s) URL, e.g. --api http://127.0.0.1:8787' });
const PortSchema = z.coerce
  .number({ error: '--port takes a port number, e.g. --port 8787' })
  .check(z.int(), z.gte(0, '--port takes 0-65535'), z.lte(65535, '--port takes 0-65535'));

const parseOrThrow = <T>(schema: z.ZodMiniType<T>, value: unknown): T => {
  const result = schema.safeParse(value);
  if (!result.success) throw new UsageError(result.error.issues.map((i) => i.message).join('; '));
  return result.data;
};

/**
 * Repair for the rest of a resumed run: --repair or --no-repair says so; --max-repairs N above 0 alone turns
 * it on (a run started with --no-repair asked for N repairs), 0 alone turns it off; nothing keeps the run's.
 */
const resumeRepair = (on: boolean | undefined, off: boolean | undefined, maxRepairs: number | undefined): boolean | undefined => {
  if (on && off) throw new UsageError("'flowmend resume' takes --repair or --no-repair, not both");
  if (on || off) return on === true;
  return maxRepairs === undefined ? undefined : maxRepairs > 0;
};

/** The command word: the first argument that is neither a flag nor a string flag's value. */
const commandWord = (argv: readonly string[]): string | undefined => {
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (!arg.startsWith('-')) return arg;
    const flag = FLAGS[arg.replace(/^--?/, '') as keyof typeof FLAGS];
    if (flag?.type === 'string' && !arg.includes('=')) i += 1;
  }
  return undefined;
};

/** `show`'s --workflow takes no value (resume's names a file): it is read as its own boolean flag. */
const showFlags = (argv: readonly string[]): string[] =>
  commandWord(argv) === 'show' ? argv.map((arg) => (arg === '--workflow' ? '--show-workflow' : arg)) : [...argv];

export const parseCommandLine = (argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Command => {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof FLAGS; allowPositionals: true; strict: true; args: string[] }>>;
  try {
    parsed = parseArgs({ args: showFlags(argv), options: FLAGS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(`${(error as Error).message.replace(/\. To specify a positional.*$/s, '')}\n\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  const [name, ...rest] = positionals;
  if (values.help || name === undefined || name === 'help') return { name: 'help' };
  if (!COMMANDS.includes(name as CommandName)) throw new UsageError(`unknown command '${name}'; commands: ${COMMANDS.join(', ')}\n\n${USAGE}`);
  const command = name as CommandName;
  for (const flag of Object.keys(values) as (keyof typeof FLAGS)[]) {
    if (['output-format', 'state-dir', 'store', 'table', 'help'].includes(flag)) continue;
    if (!ALLOWED[command].includes(flag)) throw new UsageError(`'flowmend ${command}' does not take --${flag === 'show-workflow' ? 'workflow' : flag}`);
  }
  // serve forwards to an API only when told so on its command line: the environment's API is for the client commands.
  const apiUrl =
    REMOTE_COMMANDS.includes(command) || command === 'open'
      ? (values.api ?? (env.FLOWMEND_API_URL || undefined))
      : command === 'serve'
        ? values.api
        : undefined;
  const port = values.port === undefined ? DEFAULT_SERVE_PORT : parseOrThrow(PortSchema, values.port);
  const common: CommonOptions = {
    outputFormat: parseOrThrow(OutputFormatSchema, values['output-format'] ?? 'text'),
    stateDir: values['state-dir'] ?? env.FLOWMEND_STATE_DIR ?? '.flowmend',
    store: parseOrThrow(StoreKindSchema, values.store ?? 'sqlite'),
    table: values.table,
    ...(apiUrl === undefined ? {} : { apiUrl: parseOrThrow(ApiUrlSchema, apiUrl).replace(/\/+$/, '') }),
  };
  if (common.table !== undefined && common.store !== 'dynamodb') throw new UsageError('--table names a DynamoDB table; use it with --store dynamodb');
  const mcpConfig = values['mcp-config'] ?? env.FLOWMEND_MCP_CONFIG;
  const maxRepairs = values['max-repairs'] === undefined ? undefined : parseOrThrow(CountSchema('--max-repairs'), values['max-repairs']);
  const repairApproval = values['repair-approval'] === undefined ? undefined : parseOrThrow(RepairApprovalFlagSchema, values['repair-approval']);
  const one = (what: string): string => {
    const [first, ...extra] = rest;
    if (first === undefined) throw new UsageError(`'flowmend ${command}' needs ${what}\n\n${USAGE}`);
    if (extra.length > 0) throw new UsageError(`'flowmend ${command}' takes one argument (${what}); unexpected: ${extra.join(' ')}`);
    return first;
  };
  switch (command) {
    case 'run': {
      const [workflowPath, ...pairs] = rest;
      if (workflowPath === undefined) throw new UsageError(`'flowmend run' needs a workflow file, e.g. flowmend run examples/hello.json name=Ada`);
      const params: Record<string, string> = {};
      for (const pair of pairs) {
        const eq = pair.indexOf('=');
        if (eq <= 0) throw new UsageError(`workflow inputs are given as name=value; got '${pair}'`);
        params[pair.slice(0, eq)] = pair.slice(eq + 1);
      }
      if (values.open && common.apiUrl !== undefined)
        throw new UsageError(`'flowmend run --open' opens a local run; for a run on an API use 'flowmend open <run-id> --api URL'`);
      return {
        name: 'run',
        workflowPath,
        params,
        repair: !values['no-repair'],
        maxRepairs,
        noCache: values['no-cache'] ?? false,
        workspace: values.workspace,
        mcpConfig,
        open: values.open ?? false,
        port,
        autoApprove: values['auto-approve'] ?? [],
        repairApproval,
        ...common,
      };
    }
    case 'resume':
      return {
        name: 'resume',
        runId: one('a run id (see `flowmend runs`)'),
        workflowPath: values.workflow,
        repair: resumeRepair(values.repair, values['no-repair'], maxRepairs),
        maxRepairs,
        noCache: values['no-cache'] ? true : undefined,
        force: values.force ?? false,
        mcpConfig,
        repairApproval,
        ...common,
      };
    case 'approve':
      return { name: 'approve', runId: one('a run id (see `flowmend runs --status waiting`)'), deny: values.deny ?? false, comment: values.comment, ...common };
    case 'status':
      return { name: 'status', runId: one('a run id (see `flowmend runs`)'), ...common };
    case 'show':
      if (!values['show-workflow'])
        throw new UsageError(
          `'flowmend show <run-id>' needs what to show: --workflow (the run's current workflow, as JSON); for its status: flowmend status <run-id>`,
        );
      return { name: 'show', runId: one('a run id (see `flowmend runs`)'), what: 'workflow', ...common };
    case 'runs':
      if (rest.length > 0) throw new UsageError(`'flowmend runs' takes no arguments; unexpected: ${rest.join(' ')}`);
      return {
        name: 'runs',
        limit: values.limit === undefined ? 20 : parseOrThrow(CountSchema('--limit'), values.limit),
        all: values.all ?? false,
        status: values.status === undefined ? undefined : parseOrThrow(StatusFlagSchema, values.status),
        ...common,
      };
    case 'validate':
      return { name: 'validate', workflowPath: one('a workflow file'), mcpConfig, online: values.online ?? false, ...common };
    case 'cancel':
      return { name: 'cancel', runId: one('a run id (see `flowmend runs`)'), ...common };
    case 'logs':
      return { name: 'logs', runId: one('a run id (see `flowmend runs`)'), follow: values.follow ?? false, ...common };
    case 'serve':
      if (rest.length > 0) throw new UsageError(`'flowmend serve' takes no arguments; unexpected: ${rest.join(' ')}`);
      return {
        name: 'serve',
        port,
        host: values.host ?? '127.0.0.1',
        workspace: values.workspace,
        manualClock: values['manual-clock'] ?? false,
        allowRemote: values['allow-remote'] ?? false,
        token: values.token,
        workers: values.workers === undefined ? 0 : parseOrThrow(CountSchema('--workers'), values.workers),
        runsAtOnce: values['runs-at-once'] === undefined ? undefined : parseOrThrow(CountSchema('--runs-at-once', 1), values['runs-at-once']),
        ...common,
      };
    case 'open':
      return { name: 'open', runId: one('a run id (see `flowmend runs`)'), port, ...common };
    case 'init': {
      if (rest.length > 1) throw new UsageError(`'flowmend init' takes at most one argument (a directory); unexpected: ${rest.slice(1).join(' ')}`);
      return { name: 'init', dir: rest[0] ?? '.', ...common };
    }
  }
};
