import type { ValidationIssue } from '../../core/index.ts';
import { describe, type Fields, readFields, take } from './entity-fields.ts';
import { buildEdges, nextTargetsInCode, type Routing } from './markdown-edges.ts';
import { MarkdownError } from './markdown-error.ts';
import { type CacheSection, type Entity, type MarkdownDocument, readMarkdown } from './markdown-lines.ts';

/** Keys of a step that are the node's own settings, not params (pflow hoists them). */
const NODE_KEYS = ['batch', 'loop', 'retry', 'cache', 'approval', 'prompt_cache', 'prewarm'] as const;

/** A parsed `.pflow.md`: the IR (as pflow's parser and `normalize_ir` produce it) and the line each IR path came from. */
export type MarkdownParse =
  | { ok: true; raw: Record<string, unknown>; lines: Record<string, number>; title?: string; warnings: ValidationIssue[] }
  | { ok: false; issues: ValidationIssue[] };

/** Where an issue is in the file: `file:line:column`, the form editors and terminals link; `line L, column C` for text with no file (an API body). */
export const locate = (file: string, line: number, column = 1): string => (file === '' ? `line ${line}, column ${column}` : `${file}:${line}:${column}`);

const define = (target: Record<string, unknown>, key: string, value: unknown): void => {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
};

const flat = (entity: Entity, what: string, prefix: string, lines: Record<string, number>): Record<string, unknown> => {
  const description = describe(entity, what);
  const fields = readFields(entity);
  lines[prefix] = entity.line;
  for (const [key, line] of Object.entries(fields.lines)) lines[`${prefix}.${key}`] = line;
  const out: Record<string, unknown> = { description };
  for (const [key, value] of Object.entries(fields.values)) define(out, key, value);
  return out;
};

const node = (entity: Entity, index: number, lines: Record<string, number>): { node: Record<string, unknown>; routing: Routing } => {
  const purpose = describe(entity, 'Step');
  const fields: Fields = readFields(entity);
  const at = `nodes[${index}]`;
  lines[at] = entity.line;
  const type = take(fields, 'type');
  if (type === undefined) {
    throw new MarkdownError(
      entity.line,
      1,
      `step '${entity.id}' has no type`,
      `Every step needs "- type: ..." (e.g. "- type: shell") under '### ${entity.id}'`,
    );
  }
  lines[`${at}.type`] = fields.lines.type ?? entity.line;
  const out: Record<string, unknown> = { id: entity.id, type, purpose };
  for (const key of NODE_KEYS) {
    if (!Object.hasOwn(fields.values, key)) continue;
    out[key] = take(fields, key);
    lines[`${at}.${key}`] = fields.lines[key] ?? entity.line;
  }
  const routing: Routing = { id: entity.id, line: entity.line, codeTargets: [], dynamicNext: false };
  for (const [key, field] of [
    ['next', 'next'],
    ['on-error', 'onError'],
  ] as const) {
    if (!Object.hasOwn(fields.values, key)) continue;
    const value = take(fields, key);
    const line = fields.lines[key] ?? entity.line;
    if (typeof value !== 'string' || value.trim() === '') throw new MarkdownError(line, 1, `"- ${key}:" names a step (or "end"), not ${JSON.stringify(value)}`);
    routing[field] = { value, line };
  }
  if (type === 'code' && typeof fields.values.code === 'string') {
    const found = nextTargetsInCode(fields.values.code);
    routing.codeTargets = found.targets;
    routing.dynamicNext = found.dynamic;
  }
  const params: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields.values)) {
    define(params, key, value);
    lines[`${at}.params.${key}`] = fields.lines[key] ?? entity.line;
  }
  if (Object.keys(params).length > 0) out.params = params;
  return { node: out, routing };
};

/** `## Cache`: its ```cache block split before each `${var}` (pflow's prompt-cache chunks; prose after the last is dropped). */
const cacheOf = (cache: CacheSection): Record<string, unknown> => {
  const block = cache.block;
  const example = '\'## Cache\' holds one ```cache block of prose and ${var} references, e.g. "The analysis:\\n\\n${extract.response}"';
  if (!block) throw new MarkdownError(cache.line, 1, "'## Cache' has no ```cache block", example);
  if (cache.ttl && !/^(([1-9]|[1-5][0-9]|60)m|1h)$/.test(cache.ttl.value)) {
    throw new MarkdownError(
      cache.ttl.line,
      1,
      `'${cache.ttl.value}' is not a prompt-cache TTL pflow allows`,
      'Use 1m-60m or 1h, e.g. "- ttl: 5m" (the default) or "- ttl: 1h"',
    );
  }
  const items: Record<string, unknown>[] = [];
  let last = 0;
  for (const m of block.content.matchAll(/\$\{([^}]+)\}/g)) {
    const name = m[1] as string;
    const line = block.line + 1 + block.content.slice(0, m.index).split('\n').length - 1;
    if (items.some((i) => i.name === name))
      throw new MarkdownError(line, 1, `\${${name}} appears twice in the \`\`\`cache block`, 'Each chunk is named by its ${var}: keep one');
    items.push({ name, var: name, prose_before: block.content.slice(last, m.index) });
    last = (m.index as number) + m[0].length;
  }
  if (items.length === 0) throw new MarkdownError(block.line, 1, 'the ```cache block has no ${var} reference', example);
  return { items, ...(cache.ttl ? { ttl: cache.ttl.value } : {}) };
};

const build = (doc: MarkdownDocument): { raw: Record<string, unknown>; lines: Record<string, number> } => {
  const lines: Record<string, number> = {};
  const steps = doc.entities.filter((e) => e.section === 'steps');
  if (steps.length === 0) {
    throw new MarkdownError(
      doc.stepsLine ?? 1,
      1,
      doc.stepsLine !== undefined ? "'## Steps' has no steps" : "the file has no '## Steps' section",
      "A workflow needs '## Steps' with at least one '### id' step: a line of prose, then \"- type: shell\" and its params",
    );
  }
  const raw: Record<string, unknown> = { ir_version: '0.1.0' };
  if (doc.description !== undefined) raw.description = doc.description;
  const inputs = doc.entities.filter((e) => e.section === 'inputs');
  if (inputs.length > 0) {
    const out: Record<string, unknown> = {};
    for (const e of inputs) define(out, e.id, flat(e, 'Input', `inputs.${e.id}`, lines));
    raw.inputs = out;
  }
  const built = steps.map((e, i) => node(e, i, lines));
  raw.nodes = built.map((b) => b.node);
  const edges = buildEdges(
    built.map((b) => b.routing),
    doc.warnings,
  );
  edges.forEach((e, i) => {
    lines[`edges[${i}]`] = e.line;
  });
  raw.edges = edges.map((e) => ({ from: e.from, to: e.to, action: e.action }));
  const outputs = doc.entities.filter((e) => e.section === 'outputs');
  if (outputs.length > 0) {
    const out: Record<string, unknown> = {};
    for (const e of outputs) define(out, e.id, flat(e, 'Output', `outputs.${e.id}`, lines));
    raw.outputs = out;
  }
  if (doc.cache) {
    raw.cache = cacheOf(doc.cache);
    lines.cache = doc.cache.line;
  }
  return { raw, lines };
};

/**
 * Parses pflow's `.pflow.md` into the workflow IR pflow compiles it to (`ir_version` 0.1.0), or the first
 * problem as an issue at `file:line:column` saying what the format expects, as pflow stops at the first.
 */
export const parsePflowMarkdown = (text: string, file: string): MarkdownParse => {
  try {
    const doc = readMarkdown(text);
    const { raw, lines } = build(doc);
    const warnings = doc.warnings.map(
      (w): ValidationIssue => ({
        path: locate(file, w.line),
        code: 'MARKDOWN_WARNING',
        message: w.message,
        severity: 'warning',
        line: w.line,
        column: 1,
        ...(w.hint ? { hint: w.hint } : {}),
      }),
    );
    return { ok: true, raw, lines, ...(doc.title ? { title: doc.title } : {}), warnings };
  } catch (error) {
    if (!(error instanceof MarkdownError)) throw error;
    return {
      ok: false,
      issues: [
        {
          path: locate(file, error.line, error.column),
          code: error.code,
          message: error.message,
          severity: 'error',
          line: error.line,
          column: error.column,
          ...(error.hint ? { hint: error.hint } : {}),
        },
      ],
    };
  }
};

/** An issue about the IR a `.pflow.md` compiled to, pointed at the line its path came from (the closest enclosing path that has one). */
export const locateIssue = (issue: ValidationIssue, lines: Readonly<Record<string, number>>, file: string): ValidationIssue => {
  if (issue.line !== undefined) return issue;
  let path = issue.path;
  while (path !== '') {
    const line = lines[path];
    if (line !== undefined) return { ...issue, line, column: 1, path: `${locate(file, line)} ${issue.path}` };
    const cut = Math.max(path.lastIndexOf('.'), path.lastIndexOf('['));
    path = cut > 0 ? path.slice(0, cut) : '';
  }
  return issue;
};
