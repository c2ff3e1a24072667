import type { RunError } from './run-model.ts';

const NORMALISERS: readonly [RegExp, string][] = [
  [/\b\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?\b/g, '<date>'],
  [/\b\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?\b/g, '<time>'],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>'],
  [/\b(?=[0-9a-f]*\d)[0-9a-f]{8,}\b/gi, '<hex>'],
  [/\bline \d+\b/gi, 'line <n>'],
  [/:\d+(?::\d+)?\b/g, ':<n>'],
  [/\b\d{5,}\b/g, '<num>'],
  [/\s+/g, ' '],
];

/** An error message with times, dates, uuids, hex ids, long numbers and line numbers stripped. */
export const normaliseErrorMessage = (message: string): string =>
  NORMALISERS.reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), message)
    .trim()
    .toLowerCase();

/**
 * What makes two failures "the same" for loop detection: node, code and the whole normalised message
 * (pflow compared only 40 characters, so different errors with a common prefix looked like a loop).
 */
export const errorSignature = (error: Pick<RunError, 'node_id' | 'code' | 'message'>): string =>
  `${error.node_id ?? '-'}|${error.code}|${normaliseErrorMessage(error.message)}`;
