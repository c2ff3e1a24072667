import type { RunReport } from '../../core/index.ts';
import { renderReport } from './render.ts';

export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
}

/** A run that did not succeed and stopped (failed, cancelled, interrupted: all resumable) exits 1; a running one 0. */
export const exitFor = (report: RunReport): number => (report.success || report.status === 'running' ? EXIT.ok : EXIT.failed);

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
