import { spawn } from 'node:child_process';
import type { NodeRunner, RunContext, RunnerResult } from '../core/index.ts';
import { CappedBuffer } from './capped-buffer.ts';
import { PYTHON_CODE_WRAPPER } from './code-python.ts';
import { type CodeParams, CodeParamsSchema, codeSpec, codeTimeoutOf } from './code-spec.ts';
import { commandEnvironment } from './command-env.ts';
import { scrubEngineEnvironment } from './engine-environ.ts';
import { monotonicMs } from './monotonic-clock.ts';

/** What one code node may print and return, in all (its answer is JSON on the wrapper's stdout). */
const MAX_ANSWER_BYTES = 10 * 1024 * 1024;

interface Answer {
  result?: unknown;
  next?: string | null;
  stdout?: string;
  stderr?: string;
  error?: { type: string; message: string; traceback: string };
}

const failed = (code: string, message: string, durationMs: number, details?: Record<string, unknown>, outputs?: Record<string, unknown>): RunnerResult => ({
  kind: 'failed',
  error: { code, message, ...(details ? { details } : {}) },
  ...(outputs ? { outputs } : {}),
  durationMs,
});

/**
 * Runs pflow's `code` node in its own `python3 -I` process (one per node visit): the environment of a shell
 * command (none of the engine's credentials), a timeout that kills it, a cap on what it returns. `result` is
 * the output, and `next` (text) the action.
 */
export const makeCodeRunner = (options: { python?: string; maxAnswerBytes?: number } = {}): NodeRunner<typeof CodeParamsSchema> => {
  const python = options.python ?? 'python3';
  const run = async (params: CodeParams, context: RunContext): Promise<RunnerResult> => {
    const started = monotonicMs();
    const elapsed = (): number => monotonicMs() - started;
    const timeoutS = codeTimeoutOf(params);
    const answer = new CappedBuffer(options.maxAnswerBytes ?? MAX_ANSWER_BYTES);
    const errors = new CappedBuffer(64 * 1024);
    // Python can read the engine's start-up environment as /proc/<ppid>/environ, as a shell command can.
    scrubEngineEnvironment();
    const finish = await new Promise<{ how: 'exit' | 'timeout' | 'aborted' | 'spawn-error'; code?: number | null; error?: Error }>((resolve) => {
      let child: ReturnType<typeof spawn>;
      try {
        child = spawn(python, ['-I', '-c', PYTHON_CODE_WRAPPER], { env: commandEnvironment(process.env, {}), stdio: 'pipe' });
      } catch (error) {
        resolve({ how: 'spawn-error', error: error as Error });
        return;
      }
      const stop = (how: 'timeout' | 'aborted'): void => {
        child.kill('SIGKILL');
        resolve({ how });
      };
      const timer = setTimeout(() => stop('timeout'), timeoutS * 1000);
      const onAbort = (): void => stop('aborted');
      context.signal?.addEventListener('abort', onAbort, { once: true });
      child.stdout?.on('data', (chunk: Buffer) => answer.push(chunk));
      child.stderr?.on('data', (chunk: Buffer) => errors.push(chunk));
      child.on('error', (error) => {
        clearTimeout(timer);
        resolve({ how: 'spawn-error', error });
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        context.signal?.removeEventListener('abort', onAbort);
        resolve({ how: 'exit', code });
      });
      child.stdin?.on('error', () => {});
      child.stdin?.end(JSON.stringify({ code: params.code, inputs: params.inputs, max_output: 1024 * 1024 }));
    });
    const durationMs = elapsed();
    if (finish.how === 'spawn-error') {
      return failed('SPAWN_FAILED', `cannot start ${python}: ${finish.error?.message ?? 'unknown error'} (the code node needs Python 3 on PATH)`, durationMs);
    }
    if (finish.how === 'timeout') return failed('TIMEOUT', `Python code timed out after ${timeoutS} s`, durationMs, { timeout_s: timeoutS });
    if (finish.how === 'aborted') return failed('ABORTED', 'Python code killed: the run was cancelled', durationMs);
    if (answer.truncated) {
      return failed(
        'OUTPUT_TOO_LARGE',
        `the code's result and prints take ${answer.totalBytes} bytes, over the ${MAX_ANSWER_BYTES} a code node may return`,
        durationMs,
      );
    }
    let parsed: Answer;
    try {
      parsed = JSON.parse(answer.text()) as Answer;
    } catch {
      return failed('PYTHON_FAILED', `python3 exited ${finish.code} without an answer: ${errors.text().slice(-2000)}`, durationMs);
    }
    const outputs = { result: parsed.result ?? null, stdout: parsed.stdout ?? '', stderr: parsed.stderr ?? '' };
    if (parsed.error) {
      const { type, message, traceback } = parsed.error;
      return failed('PYTHON_ERROR', `${type}: ${message}`, durationMs, { type, traceback }, outputs);
    }
    return { kind: 'ok', outputs, action: parsed.next ?? 'default', durationMs };
  };
  return { ...codeSpec, paramsSchema: CodeParamsSchema, run };
};

export const codeRunner: NodeRunner<typeof CodeParamsSchema> = makeCodeRunner();
