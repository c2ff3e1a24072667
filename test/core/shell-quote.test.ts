import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quoteForShell } from '../../functions/core/shell-quote.ts';
import { ShellContextScanner } from '../../functions/core/shell-scanner.ts';
import { resolveParams, TemplateResolutionError } from '../../functions/core/templates.ts';

/** Runs a command with `sh -c` and returns the arguments `printf` saw, split on NUL. */
const argsOf = (command: string): string[] => {
  const result = spawnSync('/bin/sh', ['-c', command], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH } });
  expect(result.status, `${command}\n${result.stderr}`).toBe(0);
  return result.stdout.split('\0').slice(0, -1);
};

const render = (command: string, inputs: Record<string, unknown>): string =>
  resolveParams({ command }, { inputs, nodes: {} }, { command: 'shell' }).command as string;

/** Any string a process argument can hold (no NUL), attacker-shaped ones included. */
const hostile = fc
  .oneof(
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.constantFrom(
      'x; touch pwned',
      '$(touch pwned)',
      '`touch pwned`',
      "'; touch pwned; '",
      '"; touch pwned; "',
      '\\',
      '\n',
      '',
      '*',
      '$HOME',
      "it's",
      "\\'",
      '${x}',
      '-n',
    ),
    fc.array(fc.constantFrom("'", '"', '\\', '$', '`', '(', ')', ' ', '\n', '*', ';', 'a', '{', '}', '#', '!', '<'), { maxLength: 12 }).map((a) => a.join('')),
  )
  .map((s) => s.replaceAll('\0', ''));

describe('shell quoting by context', () => {
  it('keeps "Hello ${name}" reading as Hello Ada', () => {
    expect(render('echo "Hello ${name}"', { name: 'Ada' })).toBe('echo "Hello Ada"');
    expect(argsOf(render('printf "%s\\0" "Hello ${name}"', { name: 'Ada' }))).toEqual(['Hello Ada']);
  });

  // Each property run renders 20 values into one script, so that 6 runs spawn 6 shells, not 120.
  const chomp = (v: string): string => v.replace(/\n+$/, '');
  it.each([
    ['a bare word', "printf '%s\\0' ${v}", (v: string) => [v]],
    ['a word joined to text', "printf '%s\\0' pre${v}post", (v: string) => [`pre${v}post`]],
    ['double quotes', 'printf \'%s\\0\' "pre ${v} post"', (v: string) => [`pre ${v} post`]],
    ['single quotes', "printf '%s\\0' 'pre ${v} post'", (v: string) => [`pre ${v} post`]],
    ['a command substitution in double quotes', 'printf \'%s\\0\' "$(printf %s ${v})"', (v: string) => [chomp(v)]],
    ['backticks', 'x=`printf %s ${v}`; printf \'%s\\0\' "$x"', (v: string) => [chomp(v)]],
  ])('round-trips any string as one argument in %s', (_where, line, expected) => {
    fc.assert(
      fc.property(fc.array(hostile, { minLength: 20, maxLength: 20 }), (values) => {
        const inputs = Object.fromEntries(values.map((v, i) => [`v${i}`, v]));
        const script = values.map((_, i) => line.replaceAll('${v}', `\${v${i}}`)).join('\n');
        expect(argsOf(render(script, inputs))).toEqual(values.flatMap(expected));
      }),
      { numRuns: 6 },
    );
  });

  it('never runs a value: injection attempts stay data', () => {
    for (const v of ['x; exit 7', '$(exit 7)', '`exit 7`', "'; exit 7; '", '"; exit 7; "']) {
      for (const command of ['echo ${v}', 'echo "${v}"', "echo '${v}'"]) {
        expect(spawnSync('/bin/sh', ['-c', render(command, { v })]).status).toBe(0);
      }
    }
  });

  it('stringifies non-string values before quoting them', () => {
    expect(argsOf(render("printf '%s\\0' ${o} ${n}", { o: { a: "b c'd" }, n: 3 }))).toEqual(['{"a":"b c\'d"}', '3']);
  });

  it('refuses a template inside a here-document, naming stdin and env as the way', () => {
    expect(() => render('cat <<EOF\n${v}\nEOF', { v: 'x' })).toThrow(TemplateResolutionError);
    expect(() => render('cat <<EOF\n${v}\nEOF', { v: 'x' })).toThrow(/here-document.*"stdin" or "env"/);
    expect(render('cat <<EOF\nfixed\nEOF\necho ${v}', { v: 'x y' })).toBe("cat <<EOF\nfixed\nEOF\necho 'x y'");
    // A line ending in a backslash joins the next one in an unquoted body: "foo\\\nEOF" does not end it.
    expect(() => render('cat <<EOF\nfoo\\\nEOF\n${v}\nEOF', { v: 'x' })).toThrow(/here-document/);
    expect(() => render("cat <<-'E'\n\tbody\n\t${v}\n\tE", { v: 'x' })).toThrow(/here-document/);
    expect(render("cat <<-'E'\n\tbody\n\tE\necho ${v}", { v: 'x' })).toBe("cat <<-'E'\n\tbody\n\tE\necho 'x'");
  });

  it('refuses a template where dash and bash would read the text differently', () => {
    expect(() => render('echo "`echo ${v}`"', { v: 'x' })).toThrow(/backticks inside/);
    expect(() => render("echo $'a\\'' ${v}", { v: 'x' })).toThrow(/\$'...'/);
    expect(() => render('echo \\${v}', { v: 'x' })).toThrow(/right after/);
    const inParam = new ShellContextScanner();
    inParam.feed('echo ${x:-');
    expect(() => inParam.context()).toThrow(/\$\{...\}/);
  });

  it('leaves params without quoting as plain text substitution', () => {
    const out = resolveParams({ command: 'echo ${v}', stdin: 'a ${v}' }, { inputs: { v: 'x;y' }, nodes: {} }, {});
    expect(out).toEqual({ command: 'echo x;y', stdin: 'a x;y' });
  });

  it('knows the context after escapes and nested quotes', () => {
    const contextAfter = (text: string): string => {
      const scanner = new ShellContextScanner();
      scanner.feed(text);
      const { quote, arithmetic, backticks } = scanner.context();
      return [quote, arithmetic ?? '', backticks ? `backticks:${backticks}` : ''].filter(Boolean).join(' ');
    };
    expect(contextAfter('echo \\"')).toBe('bare');
    expect(contextAfter('echo "a\\"')).toBe('double');
    expect(contextAfter('echo "it\'s ')).toBe('double');
    expect(contextAfter('echo "$(cat ')).toBe('bare');
    expect(contextAfter('echo \'"')).toBe('single');
    expect(contextAfter("echo hi # it's ")).toBe('comment');
    expect(contextAfter("echo hi # it's\necho ")).toBe('bare');
    expect(contextAfter("echo a#b'")).toBe('single');
    expect(contextAfter('echo `echo "')).toBe('double backticks:1');
    expect(contextAfter('echo $(( 1 + "')).toBe('double integer');
    expect(contextAfter('x=$(case a in a) echo "')).toBe('double');
    expect(contextAfter('echo "$(case a in a) echo ')).toBe('bare');
    expect(contextAfter('[[ 1 -eq ')).toBe('bare operand');
    expect(quoteForShell('', { quote: 'bare', backticks: 0 })).toBe("''");
    expect(quoteForShell('a\nb', { quote: 'comment', backticks: 0 })).toBe('a b');
    expect(quoteForShell(' 007\n', { quote: 'bare', arithmetic: 'integer', backticks: 0 })).toBe('7');
    expect(quoteForShell('-3', { quote: 'bare', arithmetic: 'integer', backticks: 0 })).toBe('(-3)');
  });
});
