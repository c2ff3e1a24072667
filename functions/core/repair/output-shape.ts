import { isRecord, jsonContainerIn } from '../json-text.ts';

/** Limits that keep a node's shape small whatever its outputs hold. */
const MAX_DEPTH = 4;
const MAX_KEYS = 15;
const MAX_LINES = 40;
const SAMPLE_CHARS = 60;

const jsonIn = jsonContainerIn;

const sampleOf = (text: string): string => JSON.stringify(text.length > SAMPLE_CHARS ? `${text.slice(0, SAMPLE_CHARS)}…` : text);

function describe(name: string, value: unknown, indent: string, depth: number, lines: string[]): void {
  if (lines.length >= MAX_LINES) return;
  const head = `${indent}${name}: `;
  if (typeof value === 'string') {
    const parsed = depth < MAX_DEPTH ? jsonIn(value) : undefined;
    if (parsed === undefined) {
      lines.push(`${head}string (${value.length} chars) ${sampleOf(value)}`);
      return;
    }
    lines.push(`${head}string holding JSON (${value.length} chars); paths go through it:`);
    describeChildren(parsed, `${indent}  `, depth + 1, lines);
    return;
  }
  if (Array.isArray(value)) {
    lines.push(`${head}array (${value.length} items)${value.length > 0 ? ', first item:' : ''}`);
    if (value.length > 0 && depth < MAX_DEPTH) describe('[0]', value[0], `${indent}  `, depth + 1, lines);
    return;
  }
  if (isRecord(value)) {
    const count = Object.keys(value).length;
    lines.push(`${head}object (${count} key${count === 1 ? '' : 's'})`);
    if (depth < MAX_DEPTH) describeChildren(value, `${indent}  `, depth + 1, lines);
    return;
  }
  lines.push(`${head}${value === null ? 'null' : `${typeof value} ${JSON.stringify(value)}`}`);
}

function describeChildren(container: unknown, indent: string, depth: number, lines: string[]): void {
  if (Array.isArray(container)) {
    describe('[0]', container[0], indent, depth, lines);
    return;
  }
  if (!isRecord(container)) return;
  const entries = Object.entries(container);
  for (const [key, value] of entries.slice(0, MAX_KEYS)) describe(key, value, indent, depth, lines);
  if (entries.length > MAX_KEYS) lines.push(`${indent}… ${entries.length - MAX_KEYS} more keys`);
}

/**
 * The shape of a node's outputs, one line per key: type, size and a short sample, nested objects
 * indented (JSON held in strings included). Bounded, so a huge output costs a few lines.
 */
export function describeOutputShape(outputs: Record<string, unknown>, indent = '  '): string[] {
  const lines: string[] = [];
  describeChildren(outputs, indent, 0, lines);
  if (lines.length >= MAX_LINES) lines.push(`${indent}… (shape truncated)`);
  return lines;
}
