import type { RunReport } from '../../core/index.ts';
import { renderReport } from './render.ts';

/** pflow's codes: 3 a person denied a gate (or rejected a repair), 4 the run waits (paused). */
export const EXIT = { ok: 0, failed: 1, usage: 2, denied: 3, waiting: 4 } as const;

/** Failures a person chose, which exit 3. */
const DENIALS = new Set(['DENIED', 'REPAIR_REJECTED']);

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
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
  emit: (report: RunReport): number => {
    io.stdout(json ? `${JSON.stringify(report, null, 2)}\n` : `${renderReport(report)}\n`);
    return exitFor(report);
  },
});
export type CliOutput = ReturnType<typeof makeOutput>;
