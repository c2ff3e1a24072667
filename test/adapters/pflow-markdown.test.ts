import { describe, expect, it } from 'vitest';
import { locateIssue, parsePflowMarkdown } from '../../functions/adapters/pflow-markdown/parse-pflow-markdown.ts';

const md = (lines: string[]): string => lines.join('\n');
const ok = (text: string) => {
  const parsed = parsePflowMarkdown(text, 'wf.pflow.md');
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed;
};
const failure = (text: string) => {
  const parsed = parsePflowMarkdown(text, 'wf.pflow.md');
  if (parsed.ok) throw new Error(`parsed: ${JSON.stringify(parsed.raw)}`);
  expect(parsed.issues).toHaveLength(1);
  return parsed.issues[0] as NonNullable<(typeof parsed.issues)[0]>;
};

const STEP = ['### hello', '', 'Say hello.', '', '- type: shell', '', '```shell command', 'echo hello', '```'];

describe('parsePflowMarkdown: the document', () => {
  it('compiles title prose, inputs, steps and outputs to pflow IR 0.1.0', () => {
    const { raw, title, lines } = ok(
      md([
        '# Greeter', // 1
        '',
        'Greets someone.',
        'Twice over.',
        '',
        '## Inputs', // 6
        '',
        '### name',
        'Who to greet.',
        '- type: string',
        '- required: false',
        '- default: world',
        '',
        '## Steps', // 14
        '',
        '### greet', // 16
        '',
        'Greet them.',
        '',
        '- type: shell',
        '- timeout: 5',
        '',
        '```shell command', // 23
        'echo "hello ${name}"',
        '```',
        '',
        '## Outputs',
        '',
        '### greeting',
        '',
        'The greeting.',
        '',
        '- source: ${greet.stdout}',
      ]),
    );
    expect(title).toBe('Greeter');
    expect(raw).toEqual({
      ir_version: '0.1.0',
      description: 'Greets someone.\nTwice over.',
      inputs: { name: { description: 'Who to greet.', type: 'string', required: false, default: 'world' } },
      nodes: [{ id: 'greet', type: 'shell', purpose: 'Greet them.', params: { timeout: 5, command: 'echo "hello ${name}"' } }],
      edges: [],
      outputs: { greeting: { description: 'The greeting.', source: '${greet.stdout}' } },
    });
    expect(lines).toMatchObject({ 'nodes[0]': 16, 'nodes[0].params.command': 24, 'nodes[0].params.timeout': 21, 'inputs.name.default': 12 });
  });

  it('reads front matter as metadata, not as part of the IR', () => {
    const { raw } = ok(md(['---', 'name: saved', 'tags: [a, b]', '---', '## Steps', ...STEP]));
    expect(raw).not.toHaveProperty('name');
    expect((raw.nodes as unknown[]).length).toBe(1);
  });

  it('ignores other sections and warns about a near miss of a known one', () => {
    const parsed = ok(md(['## Notes', '', '### not-a-step', 'prose', '- type: shell', '## Step', 'x', '## Steps', ...STEP]));
    expect((parsed.raw.nodes as { id: string }[]).map((n) => n.id)).toEqual(['hello']);
    expect(parsed.warnings).toEqual([expect.objectContaining({ line: 6, message: expect.stringContaining("did you mean '## Steps'") })]);
  });

  it('refuses a file without steps, a second Steps section, and text under Steps before any step', () => {
    expect(failure(md(['# T', 'prose'])).message).toContain("no '## Steps' section");
    expect(failure(md(['## Steps', 'just prose'])).message).toContain("'## Steps' has content but no '### id' entries (line 2)");
    const twice = failure(md(['## Steps', ...STEP, '## Steps']));
    expect(twice).toMatchObject({ line: 11, path: 'wf.pflow.md:11:1', hint: expect.stringContaining('at line 1') });
  });

  it('refuses an id pflow does not allow, and one declared twice', () => {
    expect(failure(md(['## Steps', '### Hello', 'x', '- type: shell']))).toMatchObject({
      line: 2,
      column: 5,
      hint: expect.stringContaining('^[a-z][a-z0-9_-]*$'),
    });
    expect(failure(md(['## Steps', ...STEP, ...STEP])).message).toContain("'hello' is declared twice");
  });

  it('requires a description under every input, step and output', () => {
    const issue = failure(md(['## Steps', '### hello', '- type: shell', '- command: echo']));
    expect(issue).toMatchObject({ line: 2, message: "Step 'hello' has no description" });
    expect(failure(md(['## Inputs', '### who', '- type: string', '## Steps', ...STEP])).message).toBe("Input 'who' has no description");
  });
});

describe('parsePflowMarkdown: params', () => {
  const params = (items: string[]) =>
    (ok(md(['## Steps', '### s', 'Prose.', '- type: shell', ...items])).raw.nodes as { params: Record<string, unknown> }[])[0]?.params;

  it('types one-line values as pflow does: quotes, null, YAML 1.1 booleans, numbers, flow collections; the rest is text', () => {
    expect(
      params([
        '- a: "x\\ty"',
        "- b: 'it''s'",
        '- c:',
        '- d: ~',
        '- e: yes',
        '- f: Off',
        '- g: -42',
        '- h: 1.5',
        '- i: 1e5',
        '- j: [x, 2]',
        '- k: { data: "${n.stdout}" }',
        '- l: a: b # not a comment',
        '- url: https://example.com/a?b=c',
      ]),
    ).toEqual({
      a: 'x\ty',
      b: "it's",
      c: null,
      d: null,
      e: true,
      f: false,
      g: -42,
      h: 1.5,
      i: '1e5',
      j: ['x', 2],
      k: { data: '${n.stdout}' },
      l: 'a: b # not a comment',
      url: 'https://example.com/a?b=c',
    });
  });

  it('reads an item with indented lines as YAML (maps, lists, block scalars with blank lines)', () => {
    expect(
      params(['- env:', '    DATA: ${data}', '    N: 3', '    y: n', '- script: |', '    line 1', '', '    line 3', '- list:', '    - 1', '    - two']),
    ).toEqual({
      env: { DATA: '${data}', N: 3, y: 'n' },
      script: 'line 1\n\nline 3\n',
      list: [1, 'two'],
    });
  });

  it('says where YAML breaks and how to fix a value with ": "', () => {
    const issue = failure(md(['## Steps', '### s', 'Prose.', '- type: shell', '- env:', '    A: b: c']));
    expect(issue).toMatchObject({ line: 6, message: expect.stringContaining('not valid YAML'), hint: expect.stringContaining('wrap the value in quotes') });
  });

  it('refuses a "- bullet" that is not a param, an unclosed quote and a type-less step (pflow\'s missing-type example)', () => {
    expect(failure(md(['## Steps', '### s', 'Prose.', '- type: shell', '- just a note']))).toMatchObject({
      line: 5,
      hint: expect.stringContaining('"*"'),
    });
    expect(failure(md(['## Steps', '### s', 'Prose.', '- type: shell', '- a: "open'])).message).toContain('never closed');
    expect(failure(md(['## Steps', '### fetch', 'Fetch.', '- url: https://x']))).toMatchObject({ line: 2, message: "step 'fetch' has no type" });
  });
});

describe('parsePflowMarkdown: code blocks', () => {
  const step = (body: string[]) => ok(md(['## Steps', '### s', 'Prose.', '- type: llm', ...body])).raw.nodes as Record<string, unknown>[];

  it('names the param by the info string\'s last word; "yaml X" blocks are YAML; a longer fence holds ```', () => {
    const [node] = step([
      '````markdown prompt',
      'Say:',
      '```',
      'hi',
      '```',
      '````',
      '```yaml output_schema',
      'type: object',
      '```',
      '~~~system',
      'Be brief.',
      '~~~',
    ]);
    expect(node?.params).toEqual({ prompt: 'Say:\n```\nhi\n```', output_schema: { type: 'object' }, system: 'Be brief.' });
  });

  it('refuses a bare block (pointing at the block a nested fence closed early), two blocks for one param, a param given twice, an unclosed block', () => {
    expect(failure(md(['## Steps', '### s', 'P.', '- type: shell', '```', 'x', '```'])).message).toContain('no tag');
    const nested = failure(md(['## Steps', '### s', 'P.', '- type: shell', '```shell command', 'echo', '```', 'text', '```', '```']));
    expect(nested).toMatchObject({
      line: 9,
      message: expect.stringContaining('at line 5 closed it early'),
      hint: expect.stringContaining('4 or more backticks'),
    });
    expect(failure(md(['## Steps', '### s', 'P.', '- type: shell', '```command', 'a', '```', '```command', 'b', '```'])).message).toContain(
      "a second code block for 'command'",
    );
    expect(failure(md(['## Steps', '### s', 'P.', '- type: shell', '- command: a', '```command', 'b', '```'])).message).toContain(
      'both as "- command:" (line 5)',
    );
    expect(failure(md(['## Steps', '### s', 'P.', '- type: shell', '```command', 'a']))).toMatchObject({
      line: 5,
      message: expect.stringContaining('never closed'),
    });
  });

  it("hoists the node's own settings out of params (batch, loop, retry, cache, approval, prompt_cache, prewarm)", () => {
    const [node] = step([
      '- retry:',
      '    max: 3',
      '    backoff: exponential',
      '- cache: false',
      '- approval: required',
      '- prompt_cache: [a.response]',
      '- prewarm: true',
      '- prompt: hi ${item}',
      '```yaml batch',
      'items: [1, 2]',
      'parallel: true',
      '```',
    ]);
    expect(node).toEqual({
      id: 's',
      type: 'llm',
      purpose: 'Prose.',
      retry: { max: 3, backoff: 'exponential' },
      cache: false,
      approval: 'required',
      prompt_cache: ['a.response'],
      prewarm: true,
      batch: { items: [1, 2], parallel: true },
      params: { prompt: 'hi ${item}' },
    });
  });
});

describe('parsePflowMarkdown: edges', () => {
  const step = (id: string, ...items: string[]) => [`### ${id}`, `Step ${id}.`, '- type: shell', '- command: echo', ...items];
  const edges = (...steps: string[][]) => ok(md(['## Steps', ...steps.flat()])).raw.edges;

  it('follow step order, unless "next" says otherwise ("end" ends there)', () => {
    expect(edges(step('a'), step('b', '- next: end'), step('c'))).toEqual([{ from: 'a', to: 'b', action: 'default' }]);
    expect(edges(step('a', '- next: c'), step('b', '- next: a'), step('c'))).toEqual([
      { from: 'a', to: 'c', action: 'default' },
      { from: 'b', to: 'a', action: 'default' },
    ]);
  });

  it('give several "next" targets an action each (the first is also default), and "on-error" an error edge', () => {
    expect(edges(step('a', '- next: b, c', '- on-error: d'), step('b', '- next: end'), step('c', '- next: end'), step('d', '- next: end'))).toEqual([
      { from: 'a', to: 'b', action: 'b' },
      { from: 'a', to: 'c', action: 'c' },
      { from: 'a', to: 'b', action: 'default' },
      { from: 'a', to: 'd', action: 'error' },
    ]);
  });

  it('route on a code node\'s literal `next = "id"`; a computed next must declare its targets', () => {
    const code = (assign: string) => ['### pick', 'Pick.', '- type: code', '```python code', 'x: int', 'if x:', `    ${assign}`, 'result: int = x', '```'];
    expect(edges(code('next: str = "b"'), step('b', '- next: end'))).toEqual([
      { from: 'pick', to: 'b', action: 'default' },
      { from: 'pick', to: 'b', action: 'b' },
    ]);
    expect(failure(md(['## Steps', ...code('next = choice'), ...step('b')])).message).toContain('sets next to an expression');
  });

  it('refuse a target that is not a step (with the closest), and the reserved id "end"', () => {
    const issue = failure(md(['## Steps', ...step('alpha', '- next: alpah'), ...step('beta')]));
    expect(issue).toMatchObject({
      line: 6,
      message: "step 'alpha' leads to 'alpah', which is not a step",
      hint: expect.stringContaining("Did you mean 'alpha'?"),
    });
    expect(failure(md(['## Steps', ...step('end')])).message).toContain("'end' is reserved");
  });

  it('warn (pflow refuses) when a step falls into a branch target by document order', () => {
    const parsed = ok(md(['## Steps', ...step('a', '- on-error: handler'), ...step('b'), ...step('handler', '- next: end')]));
    expect(parsed.warnings.map((w) => w.message)).toEqual([expect.stringContaining("step 'b' falls into 'handler' by document order")]);
  });
});

describe('parsePflowMarkdown: ## Cache', () => {
  it('splits the cache block before each ${var}', () => {
    const { raw } = ok(
      md(['## Cache', '- ttl: 1h', 'Prose is ignored.', '```cache', 'The input:', '${topic}', 'Then:', '${a.response}', 'dropped', '```', '## Steps', ...STEP]),
    );
    expect(raw.cache).toEqual({
      ttl: '1h',
      items: [
        { name: 'topic', var: 'topic', prose_before: 'The input:\n' },
        { name: 'a.response', var: 'a.response', prose_before: '\nThen:\n' },
      ],
    });
  });

  it('refuses another setting, a bad ttl, a block with no var', () => {
    expect(failure(md(['## Cache', '- size: 3', '## Steps', ...STEP])).message).toContain("'size' is not a setting");
    expect(failure(md(['## Cache', '- ttl: 2h', '```cache', '${x}', '```', '## Steps', ...STEP])).hint).toContain('1m-60m or 1h');
    expect(failure(md(['## Cache', '```cache', 'no var', '```', '## Steps', ...STEP])).message).toContain('no ${var}');
  });
});

describe('locateIssue', () => {
  it("places an IR issue at the line of its path's closest ancestor that has one", () => {
    const { lines } = ok(md(['## Steps', ...STEP]));
    const located = locateIssue({ path: 'nodes[0].params.command', code: 'X', message: 'm', severity: 'error' }, lines, 'wf.pflow.md');
    expect(located).toMatchObject({ line: 9, path: 'wf.pflow.md:9:1 nodes[0].params.command' });
    expect(locateIssue({ path: 'nodes[0].params.env.A', code: 'X', message: 'm', severity: 'error' }, lines, 'wf.pflow.md').line).toBe(2);
  });
});
