import { describe, expect, it } from 'vitest';
import { closestMatch } from '../../functions/core/closest-match.ts';
import { FlowmendError } from '../../functions/core/errors.ts';
import { availablePaths, findTemplates, resolveParams, resolveValue, type TemplateContext, TemplateResolutionError } from '../../functions/core/templates.ts';

const context: TemplateContext = {
  inputs: { name: 'world', count: 3, flag: true, nothing: null, tags: ['a', 'b'], config: { depth: 2 }, 'my-input': 'hy' },
  nodes: {
    greet: { stdout: 'hello\n', stderr: '', exit_code: 0 },
    list: { stdout: '{"items":[{"name":"x","id":7},{"name":"y","id":8}],"total":2}\n', stderr: '', exit_code: 0 },
    arr: { stdout: '  [[1, 2], [3, 4]]  ' },
    fetch: { status_code: 200, response: { items: [{ title: 'first', tags: [] }], user: null, ok: true } },
    nums: { stdout: '123', quoted: '"abc"' },
    'fetch-data': { items: [{ title: 't' }] },
  },
};

function resolutionError(run: () => unknown): TemplateResolutionError {
  try {
    run();
  } catch (error) {
    if (error instanceof TemplateResolutionError) return error;
    throw error;
  }
  throw new Error('expected a TemplateResolutionError');
}

describe('findTemplates', () => {
  it.each([
    ['${name}', [{ expr: 'name', root: 'name', path: [] }]],
    ['${greet.stdout}', [{ expr: 'greet.stdout', root: 'greet', path: ['stdout'] }]],
    ['${node.key.path[0].x}', [{ expr: 'node.key.path[0].x', root: 'node', path: ['key', 'path', 0, 'x'] }]],
    ['${x[0][1]}', [{ expr: 'x[0][1]', root: 'x', path: [0, 1] }]],
    ['${fetch-data.items[12].title}', [{ expr: 'fetch-data.items[12].title', root: 'fetch-data', path: ['items', 12, 'title'] }]],
    ['${_a.b-c}', [{ expr: '_a.b-c', root: '_a', path: ['b-c'] }]],
    ['$${name}', []],
    ['a $${x} b ${y}', [{ expr: 'y', root: 'y', path: [] }]],
    ['${123} ${@x} ${a[-1]} ${a.} ${ a } ${a[b]} $x {x}', []],
    ['no templates', []],
  ])('%s', (text, expected) => {
    expect(findTemplates(text)).toEqual(expected);
  });

  it('walks objects and arrays deeply, in order of appearance', () => {
    const value = { a: '${one}', b: ['${two} and ${three}', { c: '$${not} ${four.x}' }], d: 5, e: null };
    expect(findTemplates(value).map((t) => t.expr)).toEqual(['one', 'two', 'three', 'four.x']);
  });
});

describe('resolveValue', () => {
  it.each<[string, unknown, unknown]>([
    ['whole template keeps a number', '${count}', 3],
    ['whole template keeps a boolean', '${flag}', true],
    ['whole template keeps null', '${nothing}', null],
    ['whole template keeps an array', '${tags}', ['a', 'b']],
    ['whole template keeps an object', '${config}', { depth: 2 }],
    ['whole template of a node gives its outputs', '${greet}', { stdout: 'hello\n', stderr: '', exit_code: 0 }],
    ['hyphenated names', '${my-input} ${fetch-data.items[0].title}', 'hy t'],
    ['text: string as-is', 'hello ${name}!', 'hello world!'],
    ['text: number', 'n=${count}', 'n=3'],
    ['text: boolean', 'f=${flag}', 'f=true'],
    ['text: null is empty', '[${nothing}]', '[]'],
    ['text: array as compact JSON', 't=${tags}', 't=["a","b"]'],
    ['text: object as compact JSON', 'c=${config}', 'c={"depth":2}'],
    ['several templates', '${name}-${count}-${name}', 'world-3-world'],
    ['escape gives a literal template', '$${name}', '${name}'],
    ['escape inside text', 'a $${x} b ${name}', 'a ${x} b world'],
    ['escape with a path', 'echo $${HOME.dir[0]}', 'echo ${HOME.dir[0]}'],
    ['not-a-template syntax stays literal', 'x ${ a } ${1} ${a:-b}', 'x ${ a } ${1} ${a:-b}'],
    ['index into an object path', '${fetch.response.items[0].title}', 'first'],
    ['whole template keeps a nested array', '${fetch.response.items[0].tags}', []],
    ['JSON in stdout is traversed', '${list.stdout.items[1].name}', 'y'],
    ['JSON traversal keeps types', '${list.stdout.items[0].id}', 7],
    ['JSON traversal into a top-level array with chained indices', '${arr.stdout[1][0]}', 3],
    ['JSON traversal inside text', 'total=${list.stdout.total}', 'total=2'],
    ['a JSON-looking string is not parsed when not traversed', '${list.stdout}', context.nodes.list?.stdout],
    ['JSON primitives are never parsed from strings', '${nums.stdout}', '123'],
    ['a JSON string primitive stays a string', '${nums.quoted}', '"abc"'],
    ['node output null inside an object', '${fetch.response.user}', null],
    ['non-strings pass through', 42, 42],
  ])('%s', (_name, value, expected) => {
    expect(resolveValue(value, context)).toEqual(expected);
  });

  it('resolves deeply and keeps the structure', () => {
    const value = { a: ['${count}', { b: 'x ${name}', c: '${flag}' }], d: null, e: 1.5 };
    expect(resolveValue(value, context)).toEqual({ a: [3, { b: 'x world', c: true }], d: null, e: 1.5 });
  });

  it('does not change the value it was given', () => {
    const value = { a: ['${count}'] };
    resolveValue(value, context);
    expect(value).toEqual({ a: ['${count}'] });
  });

  it('prefers the node when a name is both an input and a node id', () => {
    const clash: TemplateContext = { inputs: { greet: 'input' }, nodes: { greet: { stdout: 'node' } } };
    expect(resolveValue('${greet.stdout}', clash)).toBe('node');
  });

  it('does not treat inherited properties as keys', () => {
    expect(() => resolveValue('${greet.constructor}', context)).toThrow(TemplateResolutionError);
    expect(() => resolveValue('${toString}', context)).toThrow(TemplateResolutionError);
  });

  it.each<[string, string, RegExp]>([
    ['unknown root', '${nme}', /no input or node output named 'nme' — did you mean 'name'\?/],
    ['unknown node output', '${greet.stdot}', /node 'greet' has no output 'stdot' — did you mean 'stdout'\? \(outputs: stdout, stderr, exit_code\)/],
    ['missing key in an object', '${fetch.response.itms}', /'fetch.response' has no key 'itms' — did you mean 'items'\?/],
    [
      'missing key inside JSON text lists the keys there',
      '${list.stdout.items[0].nme}',
      /'list.stdout.items\[0\]' has no key 'nme' — did you mean 'name'\? \(keys: name, id\)/,
    ],
    ['index out of range', '${fetch.response.items[5].title}', /'fetch.response.items' has 1 item; index \[5\] is out of range/],
    ['index out of range in JSON text', '${list.stdout.items[2]}', /'list.stdout.items' has 2 items; index \[2\] is out of range/],
    ['traversal through null', '${fetch.response.user.name}', /'fetch.response.user' is null, so it has no key 'name'/],
    ['traversal through a plain string', '${greet.stdout.x}', /'greet.stdout' is the string "hello\\n", not a JSON object or array/],
    ['traversal through a number', '${fetch.status_code.x}', /'fetch.status_code' is a number \(200\), so it has no key 'x'/],
    ['index into an object', '${fetch.response[0]}', /'fetch.response' is an object, not an array/],
    ['key on an array', '${tags.first}', /'tags' is an array of 2 items, so it has no key 'first'/],
    ['index on a JSON primitive string', '${nums.stdout[0]}', /'nums.stdout' is the string "123", not a JSON object or array, so it has no \[0\]/],
  ])('fails on %s, saying where and why', (_name, template, reason) => {
    const error = resolutionError(() => resolveValue(`x ${template}`, context));
    expect(error.message).toMatch(reason);
    expect(error.details?.unresolved).toEqual([template]);
  });

  it('fails for a whole-string template too, instead of passing it on as text', () => {
    expect(() => resolveValue('${missing}', context)).toThrow(TemplateResolutionError);
  });

  it('is a FlowmendError with a stable name and code, not retryable', () => {
    const error = resolutionError(() => resolveValue('${missing}', context));
    expect(error).toBeInstanceOf(FlowmendError);
    expect([error.name, error.code, error.retryable]).toEqual(['TemplateResolutionError', 'TEMPLATE_UNRESOLVED', false]);
  });
});

describe('resolveParams', () => {
  it('resolves every param', () => {
    const params = { command: 'echo ${name}', stdin: '${fetch.response}', timeout_s: 5 };
    expect(resolveParams(params, context)).toEqual({ command: 'echo world', stdin: context.nodes.fetch?.response, timeout_s: 5 });
  });

  it('names every unresolved template and the param it is in', () => {
    const params = { command: 'echo ${greet.stdot} ${nme}', stdin: { deep: ['${greet.stdot}'] }, ok: '${name}' };
    const error = resolutionError(() => resolveParams(params, context));
    expect(error.details?.unresolved).toEqual(['${greet.stdot}', '${nme}']);
    expect(error.details?.params).toEqual(['command', 'stdin']);
    expect(error.message).toContain("param 'command': ${greet.stdot}");
    expect(error.message).toContain("param 'command': ${nme}");
    expect(error.message).toContain("param 'stdin': ${greet.stdot}");
    expect(error.message).not.toContain("'ok'");
  });

  it.each([
    ['${greet.stdot}', '${greet.stdout}'],
    ['${list.stdout.items[1].nme}', '${list.stdout.items[1].name}'],
    ['${fetc.response.items[0]}', '${fetch.response.items[0]}'],
    ['${greet.zzzzzz}', undefined],
  ])('suggests a fix for %s', (template, suggestion) => {
    const error = resolutionError(() => resolveParams({ command: template }, context));
    const problems = error.details?.problems as { suggestion?: string }[];
    expect(problems[0]?.suggestion).toBe(suggestion);
  });

  it('lists the available paths, closest to the broken template first', () => {
    const error = resolutionError(() => resolveParams({ command: '${greet.stdot}' }, context));
    const available = error.details?.available as string[];
    expect(available[0]).toBe('greet.stdout');
    expect(available).toContain('name');
    expect(available.length).toBeLessThanOrEqual(30);
    expect(error.message).toMatch(/Available paths: greet\.stdout, name, /);
  });
});

describe('availablePaths', () => {
  it('lists inputs, node outputs and deeper leaves, shallow first', () => {
    const small: TemplateContext = {
      inputs: { name: 'w' },
      nodes: {
        greet: { stdout: 'hi', exit_code: 0 },
        fetch: { response: { items: [{ title: 't' }, { title: 'u' }], empty: [] } },
      },
    };
    expect(availablePaths(small)).toEqual([
      'name',
      'greet.stdout',
      'greet.exit_code',
      'fetch.response',
      'fetch.response.empty',
      'fetch.response.items[0].title',
    ]);
  });

  it('follows JSON held in strings, listing the string too', () => {
    const paths = availablePaths({ inputs: {}, nodes: { list: context.nodes.list ?? {} } });
    expect(paths).toEqual(['list.stdout', 'list.stderr', 'list.exit_code', 'list.stdout.total', 'list.stdout.items[0].name', 'list.stdout.items[0].id']);
  });

  it('stops at maxDepth and lists the container there', () => {
    const deep: TemplateContext = { inputs: {}, nodes: { a: { out: { b: { c: { d: { e: 1 } } } } } } };
    expect(availablePaths(deep, { maxDepth: 3 })).toEqual(['a.out', 'a.out.b.c']);
    expect(availablePaths(deep)).toEqual(['a.out', 'a.out.b.c.d']);
  });

  it('is bounded for huge outputs', () => {
    const wide = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, { v: i }]));
    const paths = availablePaths({ inputs: { name: 'x' }, nodes: { big: { response: wide }, small: { stdout: '' } } });
    expect(paths).toHaveLength(30);
    expect(paths.slice(0, 4)).toEqual(['name', 'big.response', 'small.stdout', 'big.response.k0.v']);
    expect(availablePaths({ inputs: {}, nodes: { big: { response: wide } } }, { limit: 5 })).toHaveLength(5);
  });

  it('skips keys that a template cannot name, and a node hides an input of the same name', () => {
    const odd: TemplateContext = { inputs: { a: 'input', b: 1 }, nodes: { a: { 'has space': 1, '1x': 2, 'content-type': 3 } } };
    expect(availablePaths(odd)).toEqual(['b', 'a.content-type']);
  });

  it('puts the path closest to `near` first', () => {
    expect(availablePaths(context, { near: 'fetch.response.items[0].titel' })[0]).toBe('fetch.response.items[0].title');
  });
});

describe('closestMatch', () => {
  it.each<[string, string[], string | undefined]>([
    ['stdot', ['stdout', 'stderr', 'exit_code'], 'stdout'],
    ['STDOUT', ['stderr', 'stdout'], 'stdout'],
    ['exitcode', ['stdout', 'exit_code'], 'exit_code'],
    ['parameters', ['id', 'type', 'params', 'purpose'], 'params'],
    ['zzz', ['stdout', 'stderr'], undefined],
    ['a', ['b', 'c'], undefined],
    ['x', [], undefined],
  ])('%s in %j -> %s', (word, candidates, expected) => {
    expect(closestMatch(word, candidates)).toBe(expected);
  });
});
