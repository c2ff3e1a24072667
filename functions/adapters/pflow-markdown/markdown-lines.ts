import { MarkdownError } from './markdown-error.ts';
import { parseYaml } from './yaml-values.ts';

export type SectionKind = 'inputs' | 'steps' | 'outputs' | 'cache' | 'other' | 'none';

/** A fenced block: the info string's last word names the param; `yaml X` means the content is YAML. */
export interface CodeBlock {
  info: string;
  param: string;
  yaml: boolean;
  content: string;
  /** The line of the opening fence. */
  line: number;
}

/** One `- key: value` item, with its indented continuation lines when it has some. */
export interface ParamItem {
  text: string;
  line: number;
  multiline: boolean;
}

/** A `### id` under Inputs, Steps or Outputs. */
export interface Entity {
  id: string;
  line: number;
  section: SectionKind;
  prose: string[];
  items: ParamItem[];
  blocks: CodeBlock[];
}

export interface CacheSection {
  line: number;
  ttl?: { value: string; line: number };
  block?: { content: string; line: number };
}

export interface MarkdownWarning {
  line: number;
  message: string;
  hint?: string;
}

export interface MarkdownDocument {
  title?: string;
  description?: string;
  metadata?: Record<string, unknown>;
  entities: Entity[];
  cache?: CacheSection;
  /** The line of `## Steps`, when there is one. */
  stepsLine?: number;
  warnings: MarkdownWarning[];
}

const ENTITY_ID = /^[a-z][a-z0-9_-]*$/;
const SECTIONS: Readonly<Record<string, SectionKind>> = { inputs: 'inputs', steps: 'steps', outputs: 'outputs', cache: 'cache' };
const NEAR_MISS: Readonly<Record<string, string>> = { input: 'Inputs', output: 'Outputs', step: 'Steps' };
const TITLES: Readonly<Record<string, string>> = { inputs: 'Inputs', steps: 'Steps', outputs: 'Outputs' };
const ENTITY_SECTIONS = new Set<SectionKind>(['inputs', 'steps', 'outputs']);
const ITEM = /^(\s*)- (.+)$/;
const FENCE = /^(`{3,}|~{3,})/;

const frontMatter = (lines: readonly string[]): { metadata?: Record<string, unknown>; bodyStart: number } => {
  if (lines[0]?.trimEnd() !== '---') return { bodyStart: 0 };
  const close = lines.findIndex((line, i) => i > 0 && line.trimEnd() === '---');
  if (close < 0) return { bodyStart: 0 };
  const data = parseYaml(lines.slice(1, close).join('\n'), 2, 'the front matter');
  const metadata = data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : undefined;
  return { ...(metadata ? { metadata } : {}), bodyStart: close + 1 };
};

/**
 * pflow's `.pflow.md` grammar, line by line as pflow reads it (not CommonMark): optional front matter,
 * `# Title` and its prose, `## Inputs|Steps|Outputs|Cache` (other sections ignored), `### id` entities
 * with prose, `- key: value` items (indented lines continue one) and fenced blocks. Throws MarkdownError.
 */
export const readMarkdown = (text: string): MarkdownDocument => {
  const lines = text.split(/\r\n|\n|\r/);
  const { metadata, bodyStart } = frontMatter(lines);
  const doc: MarkdownDocument = { ...(metadata ? { metadata } : {}), entities: [], warnings: [] };
  const seen = new Map<SectionKind, number>();
  const orphans = new Map<SectionKind, number[]>();
  const titleProse: string[] = [];
  let section: SectionKind = 'none';
  let entity: Entity | undefined;
  let fence: { marker: string; info: string; line: number; content: string[] } | undefined;
  let item: { lines: string[]; line: number; indent: number } | undefined;

  const flushItem = (): void => {
    if (item && entity) {
      while (item.lines.length > 1 && item.lines[item.lines.length - 1]?.trim() === '') item.lines.pop();
      entity.items.push({ text: item.lines.join('\n'), line: item.line, multiline: item.lines.length > 1 });
    }
    item = undefined;
  };

  const closeFence = (open: NonNullable<typeof fence>): void => {
    const content = open.content.join('\n');
    const words = open.info.split(/\s+/).filter(Boolean);
    const block = {
      info: open.info,
      param: words.at(-1) ?? '',
      yaml: words.length > 1 && words[0]?.toLowerCase() === 'yaml',
      content,
      line: open.line,
    };
    if (entity) entity.blocks.push(block);
    else if (section === 'cache' && doc.cache) {
      if (block.param !== 'cache')
        throw new MarkdownError(open.line, 1, `a code block under '## Cache' must be tagged \`cache\`, not '${open.info}'`, 'Open it with ```cache');
      if (doc.cache.block) throw new MarkdownError(open.line, 1, "'## Cache' holds one ```cache block", 'Put every chunk in the one block');
      doc.cache.block = { content, line: open.line };
    } else if (ENTITY_SECTIONS.has(section)) orphans.set(section, [...(orphans.get(section) ?? []), open.line]);
  };

  for (let index = bodyStart; index < lines.length; index += 1) {
    const line = lines[index] as string;
    const number = index + 1;
    const trimmed = line.trim();
    if (fence) {
      const char = fence.marker[0] as string;
      if (trimmed.length >= fence.marker.length && [...trimmed].every((c) => c === char)) {
        closeFence(fence);
        fence = undefined;
      } else fence.content.push(line);
      continue;
    }
    const opening = FENCE.exec(trimmed);
    if (opening) {
      flushItem();
      fence = { marker: opening[1] as string, info: trimmed.slice((opening[1] as string).length).trim(), line: number, content: [] };
      continue;
    }
    if (trimmed.startsWith('# ')) {
      flushItem();
      if (doc.title === undefined) {
        doc.title = trimmed.slice(2).trim();
        entity = undefined;
      }
      continue;
    }
    if (trimmed.startsWith('## ')) {
      flushItem();
      entity = undefined;
      const name = trimmed.slice(3).trim();
      section = SECTIONS[name.toLowerCase()] ?? 'other';
      const near = NEAR_MISS[name.toLowerCase()];
      if (near)
        doc.warnings.push({ line: number, message: `'## ${name}' is not a section pflow reads: did you mean '## ${near}'?`, hint: `Rename it '## ${near}'` });
      const earlier = seen.get(section);
      if (section !== 'other' && earlier !== undefined) {
        throw new MarkdownError(number, 1, `a second '## ${name}' section`, `Merge it into the '## ${name}' section at line ${earlier}`);
      }
      if (section !== 'other') seen.set(section, number);
      if (section === 'cache') doc.cache = { line: number };
      if (section === 'steps') doc.stepsLine = number;
      continue;
    }
    if (trimmed.startsWith('### ')) {
      flushItem();
      const id = trimmed.slice(4).trim();
      if (!ENTITY_ID.test(id)) {
        throw new MarkdownError(
          number,
          5,
          `'${id}' is not an id pflow accepts`,
          'An id starts with a lowercase letter and holds lowercase letters, digits, - and _ (pattern ^[a-z][a-z0-9_-]*$)',
        );
      }
      const twin = doc.entities.find((e) => e.id === id && e.section === section);
      if (twin) throw new MarkdownError(number, 5, `'${id}' is declared twice in this section`, `The first '### ${id}' is at line ${twin.line}`);
      entity = { id, line: number, section, prose: [], items: [], blocks: [] };
      doc.entities.push(entity);
      continue;
    }
    if (section === 'cache' && !entity && doc.cache) {
      const m = /^\s*-\s+(\S+?):\s*(.*)$/.exec(line);
      if (!m) continue;
      if (m[1] !== 'ttl') throw new MarkdownError(number, 1, `'${m[1]}' is not a setting of '## Cache'`, "'## Cache' takes only '- ttl: 5m' or '- ttl: 1h'");
      if (doc.cache.ttl) throw new MarkdownError(number, 1, "a second '- ttl:' under '## Cache'", `The first is at line ${doc.cache.ttl.line}`);
      doc.cache.ttl = { value: (m[2] as string).trim(), line: number };
      continue;
    }
    if (entity) {
      if (item) {
        const indent = line.length - line.trimStart().length;
        if (trimmed === '' || indent >= item.indent) {
          item.lines.push(line);
          continue;
        }
        flushItem();
      }
      const m = ITEM.exec(line);
      if (m) {
        item = { lines: [line.trimEnd()], line: number, indent: (m[1] as string).length + 2 };
        continue;
      }
      if (trimmed !== '') entity.prose.push(trimmed);
      continue;
    }
    if (doc.title !== undefined && section === 'none') {
      if (trimmed) titleProse.push(trimmed);
      continue;
    }
    if (ENTITY_SECTIONS.has(section) && trimmed) orphans.set(section, [...(orphans.get(section) ?? []), number]);
  }
  flushItem();
  if (fence) throw new MarkdownError(fence.line, 1, `the code block opened here is never closed`, `Close it with ${fence.marker}`);
  if (titleProse.length > 0) doc.description = titleProse.join('\n');
  for (const [kind, at] of orphans) {
    const name = TITLES[kind] ?? kind;
    const where = at.length === 1 ? `line ${at[0]}` : `lines ${Math.min(...at)}-${Math.max(...at)}`;
    if (!doc.entities.some((e) => e.section === kind)) {
      throw new MarkdownError(
        Math.min(...at),
        1,
        `'## ${name}' has content but no '### id' entries (${where})`,
        `Each entry of '## ${name}' starts with a '### id' heading, then a line of prose, then its '- key: value' items`,
      );
    }
    doc.warnings.push({
      line: Math.min(...at),
      message: `'## ${name}' has text before its first '### id' (${where}), which is not read`,
      hint: 'Move it under a ### heading, or remove it',
    });
  }
  return doc;
};
