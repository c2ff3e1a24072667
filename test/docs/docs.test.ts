// The docs cannot rot: every fenced block says what it is (and the runnable ones run, the workflows
// validate), and every relative link leads to a file and heading that exist. Markdown is read with
// marked's lexer (the blocks and links as a renderer sees them, lists and tables included) and anchors
// are made with github-slugger (GitHub's own rules, duplicates numbered), not with regexes of our own.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, relative, resolve } from 'node:path';
import GithubSlugger from 'github-slugger';
import { lexer, type Token } from 'marked';
import { describe, expect, it } from 'vitest';
import { makeTempDir, REPO } from '../support/cli-process.ts';

const BIN = join(REPO, 'bin', 'flowmend.cjs');
const pages = [
  join(REPO, 'README.md'),
  join(REPO, 'ARCHITECTURE.md'),
  ...readdirSync(join(REPO, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(REPO, 'docs', f)),
];

/** What a fenced block may declare after its language, and what the test does with it. */
const KINDS = ['runnable', 'workflow', 'fragment', 'example', 'output'] as const;

interface Block {
  page: string;
  lang: string;
  kind: string | undefined;
  text: string;
  line: number;
}

/** Every token of a page, depth first (code blocks inside list items, links inside table cells). */
const walk = (tokens: Token[], out: Token[] = []): Token[] => {
  for (const token of tokens) {
    out.push(token);
    const nested = token as { tokens?: Token[]; items?: Token[]; header?: { tokens: Token[] }[]; rows?: { tokens: Token[] }[][] };
    if (nested.tokens) walk(nested.tokens, out);
    if (nested.items) walk(nested.items, out);
    for (const cell of nested.header ?? []) walk(cell.tokens, out);
    for (const row of nested.rows ?? []) for (const cell of row) walk(cell.tokens, out);
  }
  return out;
};

const parsed = new Map(pages.map((page) => [page, walk(lexer(readFileSync(page, 'utf8')))]));

const blocks: Block[] = [];
for (const [page, tokens] of parsed) {
  const source = readFileSync(page, 'utf8');
  let from = 0;
  for (const token of tokens) {
    if (token.type !== 'code' || (token as { codeBlockStyle?: string }).codeBlockStyle === 'indented') continue;
    const at = source.indexOf(token.raw, from);
    from = at < 0 ? from : at + token.raw.length;
    const [lang = '', kind] = ((token as { lang?: string }).lang ?? '').split(/\s+/);
    blocks.push({ page: relative(REPO, page), lang, kind, text: (token as { text: string }).text, line: source.slice(0, Math.max(at, 0)).split('\n').length });
  }
}

/** A loopback port nothing listens on. */
const freePort = (): Promise<number> =>
  new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });

/** The anchors of a page's headings, as GitHub makes them. */
const anchorsOf = (page: string): Set<string> => {
  const slugger = new GithubSlugger();
  const tokens = parsed.get(page) ?? walk(lexer(readFileSync(page, 'utf8')));
  return new Set(tokens.filter((t) => t.type === 'heading').map((t) => slugger.slug((t as { text: string }).text.replace(/`/g, ''))));
};

describe('the docs', () => {
  it('covers the pages a newcomer needs, and the README reads in five minutes', () => {
    expect(readFileSync(join(REPO, 'README.md'), 'utf8').split('\n').length).toBeLessThan(250);
    for (const page of ['workflows', 'cli', 'repair', 'operating-runs', 'viewer', 'aws', 'testing-locally', 'pflow', 'guarantees', 'security'])
      expect(existsSync(join(REPO, 'docs', `${page}.md`)), page).toBe(true);
  });

  it('every fenced block says what it is after its language', () => {
    const unmarked = blocks
      .filter((b) => b.lang !== '' && !KINDS.includes(b.kind as (typeof KINDS)[number]))
      .map((b) => `${b.page}:${b.line} \`\`\`${b.lang} ${b.kind ?? ''}`);
    expect(unmarked, `add one of ${KINDS.join(', ')} after the language`).toEqual([]);
    expect(blocks.filter((b) => b.kind === 'runnable').length).toBeGreaterThan(0);
  });

  it('every relative link leads to a file, and its anchor to a heading there', () => {
    const broken: string[] = [];
    for (const [page, tokens] of parsed) {
      for (const token of tokens) {
        if (token.type !== 'link' && token.type !== 'image') continue;
        const href = (token as { href: string }).href;
        if (/^[a-z]+:/i.test(href)) continue;
        const [path = '', anchor] = href.split('#');
        const target = path === '' ? page : resolve(dirname(page), decodeURIComponent(path));
        if (!existsSync(target)) broken.push(`${relative(REPO, page)}: ${href} (no such file)`);
        else if (anchor !== undefined && target.endsWith('.md') && !anchorsOf(target).has(anchor))
          broken.push(`${relative(REPO, page)}: ${href} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  const workflows = blocks.filter((b) => b.kind === 'workflow');
  it.each(workflows.map((b) => [`${b.page}:${b.line}`, b] as const))('the workflow at %s validates', (_where, block) => {
    const dir = makeTempDir('docs-workflow');
    const file = join(dir, block.lang === 'markdown' ? 'workflow.pflow.md' : 'workflow.json');
    writeFileSync(file, block.text);
    const checked = spawnSync(process.execPath, [BIN, 'validate', file, '--output-format', 'json'], {
      encoding: 'utf8',
      env: { ...process.env, FLOWMEND_STATE_DIR: join(dir, 'state') },
    });
    expect(checked.stdout, checked.stderr).toContain('"valid": true');
    expect(checked.status).toBe(0);
  });

  const runnable = blocks.filter((b) => b.kind === 'runnable');
  it.each(runnable.map((b) => [`${b.page}:${b.line}`, b] as const))(
    'the commands at %s run',
    async (_where, block) => {
      const dir = makeTempDir('docs-runnable');
      const script = join(dir, 'block.sh');
      writeFileSync(script, `set -euo pipefail\n${block.text}\n`);
      // A block that starts a server reads its port from PORT (a free one here, 8787 for a reader).
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        FLOWMEND_STATE_DIR: join(dir, 'state'),
        PORT: String(await freePort()),
        ANTHROPIC_API_KEY: '',
        FLOWMEND_API_URL: '',
      };
      // Its own process group, ended after the block: a server the block left running goes with it.
      const child = spawn('bash', [script], { cwd: REPO, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
      const status = await new Promise<number | null>((done) => child.on('exit', done));
      try {
        process.kill(-(child.pid as number), 'SIGTERM');
      } catch {
        // the group had ended with the block
      }
      expect(status, output).toBe(0);
    },
    240_000,
  );
});
