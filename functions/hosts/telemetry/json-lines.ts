import type { LogLevel, LogWriter } from '../../adapters/run-log.ts';
import { ConfigurationError } from '../../core/index.ts';

const RANK = { DEBUG: 0, INFO: 1, WARN: 2, ERROR: 3, SILENT: 4 } as const;
export type LogThreshold = keyof typeof RANK;

/** `FLOWMEND_LOG_LEVEL` (DEBUG, INFO, WARN, ERROR or SILENT; INFO when unset): the lines `serve` and the Lambdas write about runs. */
export const logThresholdFrom = (env: Readonly<Record<string, string | undefined>>): LogThreshold => {
  const raw = env.FLOWMEND_LOG_LEVEL?.trim().toUpperCase();
  if (raw === undefined || raw === '') return 'INFO';
  if (Object.hasOwn(RANK, raw)) return raw as LogThreshold;
  throw new ConfigurationError(`FLOWMEND_LOG_LEVEL: '${env.FLOWMEND_LOG_LEVEL}' is not a level; use ${Object.keys(RANK).join(', ')}`);
};

/** Whether a line at `level` is written where the threshold is `threshold`. */
export const passes = (level: LogLevel, threshold: LogThreshold): boolean => RANK[level] >= RANK[threshold];

/**
 * Log lines as JSON, one object a line, in the shape Powertools Logger gives the Lambdas' lines
 * (level, message, timestamp, service, then the fields), so one query reads both hosts' logs.
 */
export class JsonLines implements LogWriter {
  constructor(
    private readonly out: (line: string) => void,
    private readonly threshold: LogThreshold,
    private readonly service: string,
    private readonly now: () => number = Date.now,
  ) {}

  write(level: LogLevel, message: string, fields: Record<string, unknown> = {}): void {
    if (!passes(level, this.threshold)) return;
    this.out(JSON.stringify({ level, message, timestamp: new Date(this.now()).toISOString(), service: this.service, ...fields }));
  }
}
