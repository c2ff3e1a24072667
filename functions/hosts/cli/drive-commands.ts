import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { IrVersionItem, PatchCheck, PflowFormOptions, RunItem, RunStore } from '../../core/index.ts';
import {
  ConfigurationError,
  checkRunPatch,
  DEFAULT_MAX_REPAIRS,
  EngineCache,
  loadRunReport,
  prepareRun,
  RedactingRunStore,
  Redactor,
} from '../../core/index.ts';
import { localSpecCatalog } from '../../nodes/local-specs.ts';
import { flowLeaseFrom } from '../local/flow-wakeups.ts';
import type { LocalHost, LocalHostOptions } from '../local/local-host.ts';
import { loadTelemetry, type Telemetry } from '../telemetry/load-telemetry.ts';
import { type TelemetryConfig, telemetryConfigFrom } from '../telemetry/telemetry-config.ts';
import type { Command } from './cli-args.ts';
import { localCallbacks } from './cli-callbacks.ts';
import { EXIT } from './cli-output.ts';
import { cliInputProblem, engineSecrets, readSecretInput, secretInputNames, secretVariable } from './cli-secrets.ts';
import type { CliStore } from './cli-store.ts';
import type { CommandContext } from './commands.ts';
import { makeNestedProgressPrinter } from './nested-progress.ts';
import { routeStdin, stdoutOutput } from './pflow-stdio.ts';
import { ReadOnceRunStore } from './read-once-run-store.ts';
import { renderIssues, renderStatus } from './render.ts';
import { continueWaitingRun, holdShortWait } from './wait-commands.ts';
import { loadWorkflowFile } from './workflow-file.ts';

// The commands that drive a run, `run` and `resume`, imported only by them (runLocalCommand): `status`, `runs`,
// `logs` and `cancel` do not load the node specs, or the workflow checks and patching, that these two need.

/** A person's patch for `resume --workflow`, read from a file: core's checks for any patch (`checkRunPatch`). */
const checkPatch = async (store: RunStore, runId: string, path: string, options: PflowFormOptions): Promise<PatchCheck> => {
  const loaded = await loadWorkflowFile(path, options);
  if (!loaded.ok) return { ok: false, message: `invalid workflow ${path}:\n${renderIssues(loaded.issues)}`, problems: loaded.issues.map((i) => i.message) };
  return checkRunPatch(store, runId, loaded.workflow, { catalog, now: Date.now(), reason: `Workflow patched by hand from ${path}`, source: path });
};
/** FLOWMEND_MEMO_TTL_S: how long pflow's memo cache reuses a result (0 turns it off; default 24 h). */
const memoTtl = (env: Readonly<Record<string, string | undefined>>): { memoTtlS?: number } => {
  const value = env.FLOWMEND_MEMO_TTL_S;
  return value !== undefined && /^\d+$/.test(value) ? { memoTtlS: Number(value) } : {};
};
// Specs only: validating loads no runner's library (JSONata, the MCP and Anthropic SDKs).
const catalog = localSpecCatalog;

/** A resume gets the run's secret inputs again from the environment: the store never had them. */
const secretsForResume = (
  run: RunItem | undefined,
  item: IrVersionItem | undefined,
  runId: string,
  env: Readonly<Record<string, string | undefined>>,
): { ok: true; inputs: Record<string, string> } | { ok: false; message: string } => {
  if (!run || !item) return { ok: true, inputs: {} };
  const inputs: Record<string, string> = {};
  const missing: string[] = [];
  for (const name of secretInputNames(item.ir)) {
    if (!Object.hasOwn(run.params, name)) continue;
    const read = readSecretInput(name, env);
    if (!read.ok) return read;
    if (read.value === undefined) missing.push(name);
    else inputs[name] = read.value;
  }
  if (missing.length > 0) {
    const names = missing.map((name) => `'${name}' (set ${secretVariable(name)} or ${secretVariable(name)}_FILE)`).join(', ');
    return { ok: false, message: `run ${runId} needs its secret input${missing.length === 1 ? '' : 's'} again, which flowmend never stores: ${names}` };
  }
  return { ok: true, inputs };
};

/**
 * `run` and `resume` on the local store that runLocalCommand opened (and closes). Errors of the store and
 * the run (RunNotFoundError, StaleRunError...) are runLocalCommand's to turn into exit codes.
 */
export const driveCommand = async (
  command: Extract<Command, { name: 'run' | 'resume' | 'approve' }>,
  { io, limits, out, forms, viewerIo }: CommandContext,
  { stateDir, opened }: { stateDir: string; opened: CliStore },
): Promise<number> => {
  const { json, fail, emit } = out;
  // OTEL_EXPORTER_OTLP_ENDPOINT and the other standard variables; nothing set, nothing loaded (hosts/telemetry).
  let telemetryConfig: TelemetryConfig;
  try {
    telemetryConfig = telemetryConfigFrom(io.env, 'cli');
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    return fail(EXIT.usage, `OpenTelemetry configuration: ${error.message}`);
  }
  let telemetry: Telemetry | undefined;
  // The caller's trace, passed as OpenTelemetry passes a context through the environment.
  const traceparent = io.env.TRACEPARENT;
  let nodeCount = 0;
  // A workflow with a `stdout: true` output keeps stdout for that output's value: progress goes to stderr.
  let progressTo = io.stdout;
  const progress = json
    ? undefined
    : makeNestedProgressPrinter(
        (text) => progressTo(text),
        () => nodeCount,
      );
  const { blobs } = opened;
  // The commands that drive a run hold it, so what they parse of it once stays true (ReadOnceRunStore).
  const base: RunStore = new ReadOnceRunStore(opened.store);
  let store: RunStore = base;
  /** From here on, these secret inputs are put back on reads, and they are redacted from every write and print. */
  const keepSecret = (secretInputs: Record<string, string>): void => {
    io.redactor = new Redactor([...Object.values(secretInputs), ...engineSecrets(io.env)]);
    store = new RedactingRunStore(base, io.redactor, secretInputs);
  };
  keepSecret({});
  // `run --open` opens the run's page once the run is written (its first write).
  let onRunWritten: ((runId: string) => void) | undefined;
  // The state machine interpreter is loaded only by the commands that run one (run, resume).
  const makeHost = async (extra: Partial<LocalHostOptions> = {}): Promise<LocalHost> => {
    const { LocalHost } = await import('../local/local-host.ts');
    const { FileDefinitionMemo } = await import('../local/definition-memo.ts');
    // Made here, after the command knows its secrets: span messages are redacted like the store's writes.
    telemetry = await loadTelemetry(telemetryConfig, {
      redactor: io.redactor,
      onExportError: (error) => io.stderr(`flowmend: OpenTelemetry export failed: ${error instanceof Error ? error.message : String(error)}\n`),
    });
    // Validated as Step Functions validates it, once per definition: at build time for the default one, else
    // once per state dir (with --store dynamodb the state dir holds nothing else, so it is not created for
    // this: only the build's memo is read).
    return new LocalHost({
      validatedDefinitions: FileDefinitionMemo.inStateDir(command.store === 'sqlite' ? stateDir : undefined),
      runLimits: limits,
      callbacks: localCallbacks(stateDir, io.env),
      ...io.hostOptions,
      ...extra,
      ...(telemetry ? { telemetry } : {}),
      store,
      blobs,
      removeOrphanBlobs: opened.removeOrphanBlobs,
      memo: opened.memo,
      ...memoTtl(io.env),
      flow: { store: opened.flow, ...flowLeaseFrom(io.env) },
      onWrite: (write) => {
        progress?.(write);
        if (write.kind === 'run') onRunWritten?.(write.run.runId);
      },
    });
  };
  switch (command.name) {
    case 'run': {
      const loaded = await loadWorkflowFile(command.workflowPath, forms, limits);
      if (!loaded.ok) return fail(EXIT.usage, `invalid workflow ${command.workflowPath}:\n${renderIssues(loaded.issues)}`, { issues: loaded.issues });
      const params = routeStdin(loaded.workflow, command.params, io.readStdin);
      const streamed = stdoutOutput(loaded.workflow);
      if (streamed !== undefined) progressTo = io.stderr;
      const secretInputs: Record<string, string> = {};
      for (const name of secretInputNames(loaded.workflow)) {
        const read = readSecretInput(name, io.env);
        if (!read.ok) return fail(EXIT.usage, read.message);
        const value = params[name] ?? read.value;
        if (value === undefined) continue;
        if (Object.hasOwn(command.params, name)) {
          const variable = secretVariable(name);
          io.stderr(
            `flowmend: secret input '${name}' was given on the command line, where other users of this machine can read it for the whole run (ps); pass it in ${variable} or ${variable}_FILE\n`,
          );
        }
        params[name] = value;
        secretInputs[name] = value;
      }
      keepSecret(secretInputs);
      // With repair on, an invalid workflow is repaired before any node runs; without, it is a usage error.
      const prepared = prepareRun(
        {
          workflow: loaded.workflow,
          workflowName: loaded.name,
          params,
          repairEnabled: command.repair,
          maxRepairs: command.maxRepairs ?? DEFAULT_MAX_REPAIRS,
          ...(command.autoApprove.length > 0 ? { autoApprove: command.autoApprove } : {}),
          ...(command.repairApproval ? { repairApproval: command.repairApproval } : {}),
        },
        catalog,
      );
      if (!prepared.ok) {
        if (prepared.stage === 'inputs') {
          const problems = (prepared.problems ?? []).map((problem) => cliInputProblem(loaded.workflow, problem, params));
          const message = problems.length > 0 ? problems.map((p) => p.message).join('\n') : prepared.message;
          return fail(EXIT.usage, message, { problems: prepared.problems === undefined ? undefined : problems });
        }
        const issues = loaded.locate(prepared.issues ?? []);
        return fail(EXIT.usage, `invalid workflow ${command.workflowPath}:\n${renderIssues(issues)}`, { issues });
      }
      const workspace = resolve(command.workspace ?? '.');
      if (!statSync(workspace, { throwIfNoEntry: false })?.isDirectory()) return fail(EXIT.usage, `--workspace ${command.workspace}: no such directory`);
      nodeCount = prepared.spec.workflow.nodes.length;
      // The viewer (and node:child_process, to open a browser) loads only for `run --open`.
      const viewer = command.open ? await (await import('./viewer-commands.ts')).viewerForRun(store, command.port, viewerIo) : undefined;
      onRunWritten = viewer?.open;
      try {
        const host = await makeHost();
        const started = await host.start({ ...prepared.spec, noCache: command.noCache, workspace, ...(traceparent ? { traceparent } : {}) });
        return emit(await holdShortWait(host, started), streamed);
      } finally {
        await viewer?.close();
        await telemetry?.shutdown();
      }
    }
    case 'approve':
    case 'resume': {
      // One read of the run and of its workflow version serves the checks below and the engine's first step
      // (through the cache): each read parses the item, ~10 ms for a 100-node workflow's version here.
      const run = await base.getRun(command.runId);
      if (command.name === 'approve' || (run?.status === 'waiting' && command.workflowPath === undefined)) {
        // A waiting run goes on through its wait (an answer, or its deadline): waits/ in core decides.
        if (!run) return fail(EXIT.usage, `no run '${command.runId}' in this state dir (see \`flowmend runs\`)`);
        const current = await base.getIrVersion(command.runId, run.irVersion);
        const secrets = secretsForResume(run, current, command.runId, io.env);
        if (!secrets.ok) return fail(EXIT.usage, secrets.message);
        keepSecret(secrets.inputs);
        const host = await makeHost();
        const woken = await continueWaitingRun(store, host, run, command.name === 'approve' ? command : undefined);
        if (!woken.ok) return fail(woken.code, woken.message);
        return emit(woken.report);
      }
      let patch: IrVersionItem | undefined;
      if (command.workflowPath !== undefined) {
        if (!run) return fail(EXIT.usage, `no run '${command.runId}' in this state dir (see \`flowmend runs\`)`, { problems: [] });
        const checked = await checkPatch(store, command.runId, command.workflowPath, forms);
        if (!checked.ok) return fail(EXIT.usage, checked.message, { problems: checked.problems });
        patch = checked.item;
      } else if (run?.status === 'succeeded') {
        const report = await loadRunReport(store, command.runId);
        const note = `run ${command.runId} already succeeded; nothing to resume`;
        if (report) io.stdout(json ? `${JSON.stringify({ ...report, message: note }, null, 2)}\n` : `${note}\n${renderStatus(report)}\n`);
        return EXIT.ok;
      }
      const current = run ? await base.getIrVersion(command.runId, run.irVersion) : undefined;
      const secrets = secretsForResume(run, current, command.runId, io.env);
      if (!secrets.ok) return fail(EXIT.usage, secrets.message);
      keepSecret(secrets.inputs);
      const cache = new EngineCache();
      if (current) cache.rememberIr(command.runId, current.version, current.ir);
      const streamed = stdoutOutput(patch?.ir ?? current?.ir);
      if (streamed !== undefined) progressTo = io.stderr;
      try {
        return emit(
          await (await makeHost({ cache })).resume(command.runId, {
            ...(patch ? { patch } : {}),
            ...(command.maxRepairs !== undefined ? { maxRepairs: command.maxRepairs } : {}),
            ...(command.repair !== undefined ? { repairEnabled: command.repair } : {}),
            ...(command.noCache !== undefined ? { noCache: command.noCache } : {}),
            force: command.force,
            ...(traceparent ? { traceparent } : {}),
          }),
          streamed,
        );
      } finally {
        await telemetry?.shutdown();
      }
    }
  }
};
