import type { RunReport } from '../../core/index.ts';
import { streamedValue } from './pflow-stdio.ts';
import { renderReport } from './render.ts';

/** pflow's codes: 3 a person denied a gate (or rejected a repair), 4 the run waits (paused). */
export const EXIT = { ok: 0, failed: 1, usage: 2, denied: 3, waiting: 4 } as const;

/** Failures a person chose, which exit 3. */
const DENIALS = new Set(['DENIED', 'REPAIR_REJECTED']);

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  /** What was piped to the command (all of it), or undefined when stdin is not a pipe or a file: a terminal is never read. */
  readStdin?: () => string | undefined;
}

/**
 * A run that did not succeed and stopped (failed, cancelled, interrupted: all resumable) exits 1, or 3 when a
 * person denied it; a waiting one 4; a running one 0.
 */
export const exitFor = (report: RunReport): number => {
  if (report.success || report.status === 'running') return EXIT.ok;
  if (report.status === 'waiting') return EXIT.waiting;
  return report.status === 'failed' && report.errors.some((e) => DENIALS.has(e.code)) ? EXIT.denied : EXIT.failed;
};

/** How a command answers, the same for local and remote: one JSON object in JSON mode, text otherwise. */
export const makeOutput = (io: CliIo, json: boolean) => ({
  json,
  fail: (code: number, message: string, extra: Record<string, unknown> = {}): number => {
    if (json) io.stdout(`${JSON.stringify({ success: false, status: code === EXIT.usage ? 'invalid' : 'failed', error: message, ...extra }, null, 2)}\n`);
    else io.stderr(`flowmend: ${message}\n`);
    return code;
  },
  /**
   * Prints the run's report. With `streamed` (the workflow's `stdout: true` output) in text mode, stdout gets
   * that output's value alone and the summary goes to stderr, so `run wf > out.txt` keeps just the value.
   */
  emit: (report: RunReport, streamed?: string): number => {
    if (json) io.stdout(`${JSON.stringify(report, null, 2)}\n`);
    else if (streamed === undefined) io.stdout(`${renderReport(report)}\n`);
    else {
      io.stderr(`${renderReport(report)}\n`);
      const value = streamedValue(report, streamed);
      if (value !== undefined) io.stdout(value);
    }
    return exitFor(report);
  },
});
export type CliOutput = ReturnType<typeof makeOutput>;
