import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { FlowmendError, LimitConfigError, type Limits, limitsFrom, type PflowFormOptions, Redactor } from '../../core/index.ts';
import type { LocalHostOptions } from '../local/local-host.ts';
import { type Command, parseCommandLine, USAGE, UsageError } from './cli-args.ts';
import { type CliOutput, EXIT, makeOutput, type CliIo as OutputIo } from './cli-output.ts';
import { engineSecrets } from './cli-secrets.ts';
import { missingOptionalDependency } from './optional-dependencies.ts';

export interface CliIo extends OutputIo {
  /** Redacts known secrets from everything printed; set once the command knows its secrets. */
  redactor?: Redactor;
  /** Resolves when a serving command (serve, open) should stop; SIGINT or SIGTERM by default. */
  untilStopped?: () => Promise<void>;
  /** Extra host wiring (the repair service); the CLI's composition root passes it. */
  hostOptions?: Partial<Omit<LocalHostOptions, 'store'>>;
  /**
   * Given the local store's close once a command is done with the store. The bin keeps it for the process's
   * end, which it reaches without closing SQLite so that its WAL stays for the next command (bin/cli-main.ts).
   * Without it the store is closed at once (tests, and anything else that calls runCli in a longer process).
   */
  releaseStore?: (close: () => void) => void;
}

/** What runCli worked out before the command proper: pflow's forms (MCP servers) and where the viewer's lines go. */
export interface CommandContext {
  io: CliIo;
  limits: Limits;
  out: CliOutput;
  forms: PflowFormOptions;
  viewerIo: CliIo;
}

/** Whether a command line that did not parse still asked for JSON, which then gets a JSON error. */
const wantsJson = (argv: readonly string[]): boolean =>
  argv.some((arg, i) => arg === '--output-format=json' || (arg === '--output-format' && argv[i + 1] === 'json'));

/**
 * Runs one command line; returns the exit code. Never throws for bad input: it says what to do.
 * Each command's implementation is imported when the command runs (issue 13: a command loads only what
 * it uses; `validate` never evaluates the run model, the store or the interpreter).
 */
export const runCli = async (argv: readonly string[], given: CliIo): Promise<number> => {
  const io: CliIo = { ...given, redactor: new Redactor(engineSecrets(given.env)) };
  io.stdout = (text) => given.stdout(io.redactor?.text(text) ?? text);
  io.stderr = (text) => given.stderr(io.redactor?.text(text) ?? text);
  let command: Command;
  try {
    command = parseCommandLine(argv, io.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    if (wantsJson(argv)) io.stdout(`${JSON.stringify({ success: false, status: 'invalid', error: error.message }, null, 2)}\n`);
    else io.stderr(`flowmend: ${error.message}\n`);
    return EXIT.usage;
  }
  if (command.name === 'help') {
    io.stdout(`${USAGE}\n`);
    return EXIT.ok;
  }
  const json = command.outputFormat === 'json';
  const out = makeOutput(io, json);
  const { fail } = out;
  // In JSON mode stdout carries one object only: the viewer's lines go to stderr.
  const viewerIo = { ...io, stdout: json ? io.stderr : io.stdout };
  if (command.name === 'init') return (await import('./init-command.ts')).initCommand(command, io, out);
  if ((command.name === 'serve' || command.name === 'open') && command.apiUrl !== undefined) {
    const { openCommand, serveViewerOnly } = await import('./viewer-commands.ts');
    if (command.name === 'serve') return serveViewerOnly({ api: command.apiUrl, port: command.port }, viewerIo);
    return openCommand({ api: command.apiUrl }, { runId: command.runId, port: command.port }, viewerIo);
  }
  if (command.name === 'serve') {
    const remote = (await import('./serve-access.ts')).serveAccess(command, io.env);
    if (!remote.ok) return fail(EXIT.usage, remote.message);
    if (remote.token !== undefined && command.token === undefined && io.env.FLOWMEND_API_TOKEN === undefined) {
      io.stderr(`API token (send it as "Authorization: Bearer <token>", or set FLOWMEND_API_TOKEN for the CLI): ${remote.token}\n`);
    }
    const workspace = resolve(command.workspace ?? '.');
    if (!statSync(workspace, { throwIfNoEntry: false })?.isDirectory()) return fail(EXIT.usage, `--workspace ${command.workspace}: no such directory`);
    const { runServe, linesPerTurn } = await import('./serve.ts');
    const lines = linesPerTurn(io.stderr);
    try {
      await runServe({
        stateDir: command.stateDir,
        port: command.port,
        host: command.host,
        manualClock: command.manualClock,
        workspace,
        workers: command.workers,
        ...(command.runsAtOnce === undefined ? {} : { runsAtOnce: command.runsAtOnce }),
        ...(remote.token === undefined ? {} : { token: remote.token }),
        log: lines.line,
        onListening: (origin) => viewerIo.stdout(`Run viewer: ${origin}/ui/${remote.token === undefined ? '' : `?token=${remote.token}`}\n`),
        ...(io.untilStopped ? { untilStopped: io.untilStopped } : {}),
        ...(io.hostOptions ? { hostOptions: io.hostOptions } : {}),
        env: io.env,
        ...(io.redactor ? { redactor: io.redactor } : {}),
      });
    } catch (error) {
      if (error instanceof FlowmendError) return fail(EXIT.failed, error.message);
      throw error;
    } finally {
      lines.flush();
    }
    return EXIT.ok;
  }
  if (command.name !== 'validate' && command.name !== 'open' && command.apiUrl !== undefined) {
    try {
      return await (await import('./remote-commands.ts')).runRemoteCommand({ ...command, apiUrl: command.apiUrl }, io, out);
    } catch (error) {
      const missing = missingOptionalDependency(error);
      if (missing === undefined) throw error;
      return fail(EXIT.usage, missing);
    }
  }

  const mcpConfig = 'mcpConfig' in command ? await (await import('./mcp-config.ts')).loadMcpConfig(command.mcpConfig) : { ok: true as const, servers: {} };
  if (!mcpConfig.ok) return fail(EXIT.usage, (await import('./render.ts')).renderIssues(mcpConfig.issues), { issues: mcpConfig.issues });

  let limits: Limits;
  try {
    limits = limitsFrom(io.env);
  } catch (error) {
    if (!(error instanceof LimitConfigError)) throw error;
    return fail(EXIT.usage, error.message);
  }
  const context: CommandContext = { io, limits, out, forms: { mcpServers: mcpConfig.servers }, viewerIo };
  try {
    if (command.name === 'validate') return await (await import('./validate-command.ts')).validateCommand(command, context);
    return await (await import('./local-commands.ts')).runLocalCommand(command, context);
  } catch (error) {
    const missing = missingOptionalDependency(error);
    if (missing !== undefined) return fail(EXIT.usage, missing);
    // A bug or a broken store must still end in one clear line (one JSON object in JSON mode), never a stack trace.
    const name = error instanceof Error ? error.name : 'Error';
    const message = error instanceof Error ? error.message : String(error);
    return fail(EXIT.failed, `internal error: ${name}: ${message}`, { internal: true });
  }
};
