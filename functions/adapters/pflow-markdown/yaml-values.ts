import { parse, type Tags, YAMLParseError } from 'yaml';
import { MarkdownError } from './markdown-error.ts';

/**
 * YAML as pflow reads it (PyYAML's `safe_load`, YAML 1.1: `yes`/`no`/`on`/`off` are booleans). Dates,
 * which JSON cannot carry, come back as ISO text. A parse error points at its line of the file:
 * `firstLine` is the file line of the text's first line, `column` the column its text starts at.
 */
export const parseYaml = (text: string, firstLine: number, what: string, column = 1): unknown => {
  try {
    return toJson(parse(text, { version: '1.1', maxAliasCount: 50, customTags: pyYamlBooleans }));
  } catch (error) {
    if (!(error instanceof YAMLParseError)) throw error;
    const at = error.linePos?.[0];
    const reason = error.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? 'invalid YAML';
    const hint = /mapping values|implicit key|compact mappings/i.test(reason)
      ? 'A value holding ": " (colon and space) reads as a nested key in YAML: wrap the value in quotes'
      : undefined;
    throw new MarkdownError(
      firstLine + (at ? at.line - 1 : 0),
      at ? at.col + (at.line === 1 ? column - 1 : 0) : column,
      `${what} is not valid YAML: ${reason}`,
      hint,
    );
  }
};

/** YAML 1.1's booleans as PyYAML has them: not `y`/`n` (the yaml library's 1.1 schema has those), so `N: 3` keeps its key. */
const pyYamlBooleans = (tags: Tags): Tags =>
  tags.map((tag) => {
    if (typeof tag !== 'object' || tag.tag !== 'tag:yaml.org,2002:bool' || !tag.test) return tag;
    const truth = tag.test.test('true');
    return { ...tag, test: truth ? /^(?:[Yy]es|YES|[Tt]rue|TRUE|[Oo]n|ON)$/ : /^(?:[Nn]o|NO|[Ff]alse|FALSE|[Oo]ff|OFF)$/ };
  });

const toJson = (value: unknown): unknown => {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(toJson);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, { value: toJson(v), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return value;
};

const TRUE = new Set(['true', 'True', 'TRUE', 'yes', 'Yes', 'YES', 'on', 'On', 'ON']);
const FALSE = new Set(['false', 'False', 'FALSE', 'no', 'No', 'NO', 'off', 'Off', 'OFF']);
const NULL = new Set(['null', 'Null', 'NULL', '~']);
const INT = /^[+-]?\d+$/;
const FLOAT = /^[+-]?(\d+\.\d*|\.\d+)([eE][+-]?\d+)?$/;
const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\', '"': '"', n: '\n', t: '\t', r: '\r', '0': '\0', '/': '/', ' ': ' ' };

/**
 * The value of a one-line `- key: value` param, as pflow reads it: not YAML as a whole (a `: ` or `#`
 * in the value stays text), but quoted strings, null, YAML 1.1 booleans, numbers and flow collections
 * (`{...}`, `[...]`, parsed as YAML) are typed; anything else is the text itself.
 */
export const coerceScalar = (raw: string, line: number, column: number): unknown => {
  const value = raw.trim();
  if (value === '') return null;
  const first = value[0];
  if (value.length >= 2 && first === '"' && value.endsWith('"')) return value.slice(1, -1).replace(/\\(.)/g, (m, c: string) => ESCAPES[c] ?? m);
  if (value.length >= 2 && first === "'" && value.endsWith("'")) return value.slice(1, -1).replaceAll("''", "'");
  if (first === '"' || first === "'") {
    throw new MarkdownError(
      line,
      column,
      `the value ${value} opens a ${first === '"' ? 'double' : 'single'}-quoted string that is never closed`,
      'Add the closing quote',
    );
  }
  if (first === '{' || first === '[') return parseYaml(value, line, 'this flow value', column);
  if (NULL.has(value)) return null;
  if (TRUE.has(value)) return true;
  if (FALSE.has(value)) return false;
  if (INT.test(value)) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : value;
  }
  if (FLOAT.test(value)) return Number(value);
  return value;
};
