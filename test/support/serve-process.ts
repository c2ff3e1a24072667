// Starts the real `flowmend serve` (node bin/flowmend.cjs serve) as a child process on 127.0.0.1, for API tests over real HTTP.
import { type CliProcess, spawnCli } from './cli-process.ts';

export interface ServeProcess {
  url: string;
  process: CliProcess;
  /** Output so far (the serve log goes to stderr). */
  log(): string;
  /** The output once it holds `text` (serve writes its log lines once a turn of its event loop, so a line may follow the API's answer). */
  untilLogged(text: string, timeoutMs?: number): Promise<string>;
  /** SIGTERM (or SIGKILL) and wait for the process to end. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** `flowmend serve --port 0 --manual-clock [extraArgs]` on a state dir; resolves once it listens, with its URL. */
export const startServe = async (stateDir: string, timeoutMs = 30_000, extraArgs: readonly string[] = [], env?: NodeJS.ProcessEnv): Promise<ServeProcess> => {
  const proc = spawnCli(['serve', '--port', '0', '--manual-clock', ...extraArgs], { stateDir, ...(env ? { env } : {}) });
  let stderr = '';
  proc.child.stderr?.on('data', (chunk: string) => (stderr += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`flowmend serve did not listen within ${timeoutMs} ms:\n${stderr}`)), timeoutMs);
    const onData = () => {
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (!match?.[1]) return;
      clearTimeout(timer);
      proc.child.stderr?.off('data', onData);
      resolve(match[1]);
    };
    proc.child.stderr?.on('data', onData);
    proc.done.then((r) => reject(new Error(`flowmend serve exited (${r.code ?? r.signal}) before it listened:\n${stderr}`)), reject);
  });
  return {
    url,
    process: proc,
    log: () => stderr,
    untilLogged: async (text, timeoutMs = 10_000) => {
      for (const deadline = Date.now() + timeoutMs; !stderr.includes(text); ) {
        if (Date.now() > deadline) throw new Error(`flowmend serve did not log ${JSON.stringify(text)} within ${timeoutMs} ms:\n${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return stderr;
    },
    stop: async (signal = 'SIGTERM') => {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill(signal);
      await proc.done;
    },
  };
};

/** A JSON request to the API; answers status, headers and parsed body (undefined for 204). */
export const request = async <T = Record<string, unknown>>(
  base: string,
  method: string,
  path: string,
  options: { body?: unknown; raw?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: T }> => {
  const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...options.headers },
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: (text ? JSON.parse(text) : undefined) as T };
};

/**
 * Waits for a run to leave `running` (long-polling its events), then returns its report; with
 * `pastWaiting`, to leave `waiting` too (a run just answered reads `waiting` until an execution takes it).
 */
export const waitForRun = async (base: string, runId: string, timeoutMs = 30_000, pastWaiting = false): Promise<Record<string, unknown>> => {
  const deadline = Date.now() + timeoutMs;
  let cursor: string | undefined;
  while (Date.now() < deadline) {
    const page = await request<{ status: string; cursor: string }>(base, 'GET', `/runs/${runId}/events?wait=5${cursor ? `&after=${cursor}` : ''}`);
    if (page.status !== 200) throw new Error(`events of ${runId}: ${page.status} ${JSON.stringify(page.body)}`);
    cursor = page.body.cursor;
    if (page.body.status !== 'running' && !(pastWaiting && page.body.status === 'waiting')) return (await request(base, 'GET', `/runs/${runId}`)).body;
  }
  throw new Error(`run ${runId} did not finish within ${timeoutMs} ms`);
};
