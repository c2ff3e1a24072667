import { hostname } from 'node:os';
import { resolve } from 'node:path';
import type { Owner, RunStore } from '../../core/index.ts';
import {
  awaitCancelledStep,
  cancelOutcomeOf,
  cancelRun,
  DEFAULT_GRANT_MS,
  FlowmendError,
  InvalidInputError,
  listingWindow,
  listRunTree,
  loadRunReport,
  loadRunWorkflow,
  RedactingRunStore,
  RunBusyError,
  RunNotFoundError,
  StaleRunError,
} from '../../core/index.ts';
import type { Command } from './cli-args.ts';
import { EXIT } from './cli-output.ts';
import { type CliStore, openCliStore } from './cli-store.ts';
import type { CommandContext } from './commands.ts';
import { followLocal } from './local-logs.ts';
import { cancelLine, renderRuns, renderStatus, runRowOf } from './render.ts';

/** How long `cancel` waits for the process running the node to say what became of it. */
const CANCEL_CONFIRM_MS = 5_000;

/** Whether the run's owner may be a live process that will record its node's end (no wait for a dead one). */
const driverMayAnswer = (owner: Owner | undefined): boolean => {
  if (owner?.pid === undefined) return owner !== undefined;
  if (owner.host !== hostname()) return true;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * The commands on the local store (SQLite, or DynamoDB with --store dynamodb): run, resume, status, show, runs,
 * cancel, open, logs. `run` and `resume` are in drive-commands.ts, imported only by them.
 */
export const runLocalCommand = async (
  command: Exclude<Command, { name: 'help' | 'serve' | 'validate' | 'init' }>,
  context: CommandContext,
): Promise<number> => {
  const { io, out } = context;
  const { json, fail } = out;
  const stateDir = resolve(command.stateDir);
  let opened: CliStore;
  try {
    opened = await openCliStore({ stateDir, store: command.store, table: command.table, leavesWal: io.releaseStore !== undefined }, io.env);
  } catch (error) {
    if (error instanceof FlowmendError) return fail(EXIT.failed, `${error.name}: ${error.message}`);
    throw error;
  }
  // The engine's secrets are redacted from every write and print (io.redactor, made by runCli).
  const store: RunStore = io.redactor ? new RedactingRunStore(opened.store, io.redactor, {}) : opened.store;
  try {
    switch (command.name) {
      case 'run':
      case 'resume':
      case 'approve':
        return await (await import('./drive-commands.ts')).driveCommand(command, context, { stateDir, opened });
      case 'status': {
        const report = await loadRunReport(store, command.runId);
        if (!report) return fail(EXIT.usage, `no run '${command.runId}' in ${command.stateDir} (see \`flowmend runs\`)`);
        io.stdout(json ? `${JSON.stringify(report, null, 2)}\n` : `${renderStatus(report)}\n`);
        return EXIT.ok;
      }
      case 'show': {
        const current = await loadRunWorkflow(store, command.runId);
        if (!current) return fail(EXIT.usage, `no run '${command.runId}' in ${command.stateDir} (see \`flowmend runs\`)`);
        io.stdout(json ? `${JSON.stringify({ success: true, ...current }, null, 2)}\n` : `${JSON.stringify(current.workflow, null, 2)}\n`);
        return EXIT.ok;
      }
      case 'runs': {
        // Top-level runs unless --all; a window wider than the limit finds each run's children to count. Waiting
        // runs come from the store's own index of them, soonest due first, however long ago they started.
        const listed =
          command.status === 'waiting' ? await store.listWaiting({ limit: command.limit }) : await store.listRuns({ limit: listingWindow(command.limit) });
        const runs = listRunTree(listed, { includeChildren: command.all || command.status === 'waiting' })
          .filter(({ run }) => command.status === undefined || run.status === command.status)
          .slice(0, command.limit)
          .map(runRowOf);
        io.stdout(json ? `${JSON.stringify({ success: true, runs }, null, 2)}\n` : `${renderRuns(runs)}\n`);
        return EXIT.ok;
      }
      case 'cancel': {
        // The process driving the run (another local one) sees the cancel within a poll, stops its node and
        // records what became of it: this one waits for that record, a few seconds at most.
        // Slots it gives back go to waiting runs durably (their waits answered); `serve` or `resume` continues them.
        const result = await cancelRun(store, command.runId, Date.now(), { store: opened.flow, grantMs: DEFAULT_GRANT_MS });
        const timeoutMs = driverMayAnswer(result.previousOwner) ? CANCEL_CONFIRM_MS : 0;
        const outcome = await cancelOutcomeOf(result, (runId, seq) =>
          awaitCancelledStep(store, runId, seq, { timeoutMs, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) }),
        );
        io.stdout(
          json
            ? `${JSON.stringify({ success: true, run_id: command.runId, status: 'cancelled', already_cancelled: result.alreadyCancelled, ...outcome }, null, 2)}\n`
            : `${cancelLine(command.runId, result.alreadyCancelled, outcome)}\n`,
        );
        return EXIT.ok;
      }
      case 'open':
        if (!(await store.getRun(command.runId))) return fail(EXIT.usage, `no run '${command.runId}' in ${command.stateDir} (see \`flowmend runs\`)`);
        return await (await import('./viewer-commands.ts')).openCommand({ store }, { runId: command.runId, port: command.port }, context.viewerIo);
      case 'logs': {
        const events = await followLocal(store, command.runId, command.follow, json ? undefined : (text) => io.stdout(text));
        if (!events) return fail(EXIT.usage, `no run '${command.runId}' in ${command.stateDir} (see \`flowmend runs\`)`);
        if (json) io.stdout(`${JSON.stringify({ success: true, run_id: command.runId, status: events.status, events: events.events }, null, 2)}\n`);
        return EXIT.ok;
      }
    }
  } catch (error) {
    if (error instanceof RunNotFoundError || error instanceof InvalidInputError) return fail(EXIT.usage, error.message);
    if (error instanceof RunBusyError || error instanceof StaleRunError) return fail(EXIT.failed, error.message);
    if (error instanceof FlowmendError) return fail(EXIT.failed, `${error.name}: ${error.message}`);
    throw error;
  } finally {
    if (io.releaseStore) io.releaseStore(() => opened.close());
    else opened.close();
  }
};
