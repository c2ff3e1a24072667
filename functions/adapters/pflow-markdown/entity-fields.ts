import { MarkdownError } from './markdown-error.ts';
import type { Entity } from './markdown-lines.ts';
import { coerceScalar, parseYaml } from './yaml-values.ts';

/** An entity's fields with the line each came from (an item's first line, or the line after a block's fence). */
export interface Fields {
  values: Record<string, unknown>;
  lines: Record<string, number>;
  /** Fields that came from a code block that is not YAML (its text as written). */
  fromBlock: Set<string>;
}

const ONE_LINE = /^(\s*)-\s+(\S+?):\s*(.*)$/;
const BULLET_HINT = 'Params are "- key: value" items; write documentation bullets with "*" instead of "-"';

const setField = (fields: Fields, key: string, value: unknown, line: number): void => {
  Object.defineProperty(fields.values, key, { value, enumerable: true, writable: true, configurable: true });
  fields.lines[key] = line;
};

/** A multi-line item (`- headers:` and its indented lines) read as one YAML list item of mappings. */
const multiline = (fields: Fields, text: string, line: number): void => {
  const parsed = parseYaml(text, line, 'this param');
  const entries = Array.isArray(parsed) ? parsed : [parsed];
  for (const entry of entries) {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      throw new MarkdownError(line, 1, `'${String(entry)}' is not a "- key: value" param`, BULLET_HINT);
    }
    for (const [key, value] of Object.entries(entry)) setField(fields, key, value, line);
  }
};

/**
 * An entity's `- key: value` items and its code blocks, as pflow reads them: a one-line item is a typed
 * scalar (see coerceScalar), a multi-line one is YAML; a block's info string names its param. Refuses a
 * bare block, two blocks for one param, and a param given both inline and as a block.
 */
export const readFields = (entity: Entity): Fields => {
  const fields: Fields = { values: {}, lines: {}, fromBlock: new Set() };
  for (const item of entity.items) {
    if (item.multiline) {
      multiline(fields, item.text, item.line);
      continue;
    }
    const m = ONE_LINE.exec(item.text);
    if (!m) {
      const content = item.text.replace(/^\s*-\s*/, '').trim();
      throw new MarkdownError(item.line, 1, `'${content}' is not a "- key: value" param`, BULLET_HINT);
    }
    const column = item.text.indexOf(':', (m[1] as string).length) + 2;
    setField(fields, m[2] as string, coerceScalar(m[3] as string, item.line, column), item.line);
  }
  const blockAt = new Map<string, number>();
  for (const block of entity.blocks) {
    if (block.info === '') {
      const tagged = entity.blocks.filter((b) => b.info !== '' && b.line < block.line).at(-1);
      throw new MarkdownError(
        block.line,
        1,
        tagged
          ? `this code block has no tag: probably a \`\`\` inside the \`${tagged.info}\` block at line ${tagged.line} closed it early`
          : 'this code block has no tag, so no param takes it',
        tagged
          ? 'Fence the outer block with 4 or more backticks'
          : 'Tag it with the param it holds, e.g. ```shell command, ```prompt, ```python code, ```yaml batch',
      );
    }
    const earlier = blockAt.get(block.param);
    if (earlier !== undefined) throw new MarkdownError(block.line, 1, `a second code block for '${block.param}'`, `The first is at line ${earlier}`);
    blockAt.set(block.param, block.line);
    if (Object.hasOwn(fields.values, block.param)) {
      throw new MarkdownError(
        block.line,
        1,
        `'${block.param}' is given both as "- ${block.param}:" (line ${fields.lines[block.param]}) and as this code block`,
        'Keep one of them',
      );
    }
    const value = block.yaml ? parseYaml(block.content, block.line + 1, `the \`${block.info}\` block`) : block.content;
    setField(fields, block.param, value, block.line + 1);
    if (!block.yaml) fields.fromBlock.add(block.param);
  }
  return fields;
};

/** The entity's prose (pflow requires one for every input, step and output). */
export const describe = (entity: Entity, what: string): string => {
  if (entity.prose.length > 0) return entity.prose.join('\n');
  throw new MarkdownError(
    entity.line,
    1,
    `${what} '${entity.id}' has no description`,
    `pflow requires a line of prose under every '### ${entity.id}' heading, before its params: what it is for`,
  );
};

/** Takes a field out of the values (it goes elsewhere than params). */
export const take = (fields: Fields, key: string): unknown => {
  const value = fields.values[key];
  delete fields.values[key];
  return value;
};
