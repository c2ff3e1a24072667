import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveParams, TemplateResolutionError } from '../../functions/core/templates.ts';

/**
 * Generated commands, executed by dash (`/bin/sh` here) and by bash: each mixes templates in every
 * quoting context with the constructs that decide those contexts (comments holding quotes,
 * here-documents with quoted and unquoted delimiters, `<<-`, case patterns, arithmetic), and values
 * that try to run `touch CANARY`. The file must never appear, and each value must come back as data.
 */

const dir = mkdtempSync(join(tmpdir(), 'flowmend-quote-'));
const CANARY = join(dir, 'CANARY');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SHELLS = [
  ['dash', '/bin/sh'],
  ['bash', 'bash'],
] as const;

// stdin closed, not a pipe: Debian's bash reads ~/.bashrc when its stdin is a socket (Node's pipes are), seconds here.
const run = (shell: string, command: string) =>
  spawnSync(shell, ['-c', command], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, CANARY } });

const render = (command: string, inputs: Record<string, unknown>): string =>
  resolveParams({ command }, { inputs, nodes: {} }, { command: 'shell' }).command as string;

const payload = fc.constantFrom(
  'x; touch "$CANARY"',
  '$(touch "$CANARY")',
  '`touch "$CANARY"`',
  `'; touch "$CANARY"; '`,
  '"; touch "$CANARY"; "',
  '\ntouch "$CANARY"\n',
  'EOF\ntouch "$CANARY"\nEOF',
  'END\ntouch "$CANARY"',
  'a[$(touch "$CANARY")]',
  'it\'s "fine" # ok',
  '\\',
  '\\\n',
  "'",
  '`',
  '#',
  ')',
  ';;',
  'esac',
);

/** Any string a process argument can hold (no NUL), attacker-shaped ones included. */
const hostile = fc
  .oneof(
    payload,
    fc.string({ unit: 'binary', maxLength: 24 }),
    fc
      .array(fc.oneof(payload, fc.constantFrom("'", '"', '\\', '$', '`', '(', ')', ' ', '\n', '\t', '#', '{', '}', ';', '<', 'EOF', '-')), { maxLength: 8 })
      .map((a) => a.join('')),
  )
  .map((s) => s.replaceAll('\0', ''));

/** A piece of a script: its text (`$V` marks where its template goes) and what it prints, given the value. */
interface Piece {
  readonly text: string;
  readonly prints: (v: string) => string[];
}
const chomp = (v: string): string => v.replace(/\n+$/, '');
const none = (): string[] => [];

const withValue: Piece[] = [
  { text: "printf '%s\\0' $V", prints: (v) => [v] },
  { text: "printf '%s\\0' pre$V'post'", prints: (v) => [`pre${v}post`] },
  { text: 'printf \'%s\\0\' "a $V b"', prints: (v) => [`a ${v} b`] },
  { text: "printf '%s\\0' 'a $V b'", prints: (v) => [`a ${v} b`] },
  { text: 'printf \'%s\\0\' "$(printf %s $V)"', prints: (v) => [chomp(v)] },
  { text: 'printf \'%s\\0\' "$(printf %s "$V")"', prints: (v) => [chomp(v)] },
  { text: 'x=`printf %s $V`; printf \'%s\\0\' "$x"', prints: (v) => [chomp(v)] },
  { text: 'x=`printf %s "$V"`; printf \'%s\\0\' "$x"', prints: (v) => [chomp(v)] },
  { text: "x=`printf %s '$V'`; printf '%s\\0' \"$x\"", prints: (v) => [chomp(v)] },
  { text: "printf '%s\\0' one # it's $V \"q", prints: () => ['one'] },
  { text: '# don\'t $V say "hi', prints: none },
  { text: "case k in (k) printf '%s\\0' $V;; j) :;; esac", prints: (v) => [v] },
  { text: 'y=$(case k in k) printf %s "$V";; esac); printf \'%s\\0\' "$y"', prints: (v) => [chomp(v)] },
  { text: "printf '%s\\0' $V # c", prints: (v) => [v] },
];

const distractors: Piece[] = [
  { text: '# it\'s "quoted ( `', prints: none },
  { text: "printf '%s\\0' ok # it's fine", prints: () => ['ok'] },
  { text: ': <<\'EOF\'\nit\'s "q # $(touch "$CANARY")\nEOF', prints: none },
  { text: ': <<EOF\nit\'s "q # \\\nEOF\nstill the body\nEOF', prints: none },
  { text: ': <<-"END"\n\tit\'s `q\n\tEND', prints: none },
  { text: ": <<-END ; : \"it's\" # '\n\t'\n\tEND", prints: none },
  { text: "printf '%s\\0' $(( 6 * 7 ))", prints: () => ['42'] },
  { text: "case \"x'\" in *\\'*) printf '%s\\0' q;; esac", prints: () => ['q'] },
];

const script = fc.array(
  fc.oneof(
    { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...withValue), hostile) },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...distractors), fc.constant('')) },
  ),
  { minLength: 2, maxLength: 7 },
);

describe('shell quoting, executed by dash and bash', () => {
  it.each(SHELLS)('keeps every value data in generated commands under %s', (_name, shell) => {
    fc.assert(
      fc.property(script, (pieces) => {
        const inputs: Record<string, string> = {};
        const lines = pieces.map(([piece, value], i) => {
          inputs[`v${i}`] = value;
          return piece.text.replace('$V', `\${v${i}}`);
        });
        const command = render(lines.join('\n'), inputs);
        const result = run(shell, command);
        expect(existsSync(CANARY), command).toBe(false);
        expect(result.status, `${command}\n${result.stderr}`).toBe(0);
        expect(result.stdout.split('\0').slice(0, -1)).toEqual(pieces.flatMap(([piece, value]) => piece.prints(value)));
      }),
      { numRuns: 40 },
    );
  });

  it.each(SHELLS)('gives $(( )) a number as a bare number, and refuses any other value, under %s', (_name, shell) => {
    fc.assert(
      fc.property(fc.integer({ min: -1e9, max: 1e9 }), fc.constantFrom('', '\n', ' ', '0'), (n, pad) => {
        const value = n < 0 ? `-${pad === '0' ? '0' : ''}${-n}` : `${pad === '0' ? '0' : ''}${n}${pad === '0' ? '' : pad}`;
        const command = render("printf '%s\\0' $(( ${n} + 1 )) $(( 3 - ${n} ))", { n: value });
        expect(run(shell, command).stdout.split('\0').slice(0, -1)).toEqual([String(n + 1), String(3 - n)]);
      }),
      { numRuns: 30 },
    );
    for (const value of ['x; touch "$CANARY"', 'a[$(touch "$CANARY")]', '1+1', '1.5', '', '0x10', 'n']) {
      expect(() => render('echo $(( ${n} + 1 ))', { n: value }), value).toThrow(TemplateResolutionError);
    }
    expect(render('echo $(( ${n} + 1 ))', { n: 41 })).toBe('echo $(( 41 + 1 ))');
  });

  it('holds the reproductions of issue 27 under both shells', () => {
    const commands = [
      "# don't panic\necho hello ${name}",
      '# say "hi\necho hello ${name}',
      "echo ok # it's fine\necho hello ${name}",
      "# it's\ncat <<EOF\nbody\nEOF\necho hello ${name}",
    ];
    for (const [, shell] of SHELLS) {
      for (const command of commands) {
        const result = run(shell, render(command, { name: 'x; touch "$CANARY"' }));
        expect(existsSync(CANARY), command).toBe(false);
        expect(result.stdout).toContain('hello x; touch');
      }
    }
    expect(() => render("# it's\ncat <<EOF\n${name}\nEOF", { name: 'x' })).toThrow(/here-document/);
  });

  it('keeps bash arithmetic to integers: (( )), let, [[ ]] and subscripts', () => {
    const attack = 'a[$(touch "$CANARY")]';
    for (const command of ['(( ${v} > 1 ))', 'let x=${v}', 'a[${v}]=1', 'echo $[ ${v} + 1 ]', 'for (( i = 0; i < ${v}; i++ )); do :; done']) {
      expect(() => render(command, { v: attack }), command).toThrow(TemplateResolutionError);
      expect(run('bash', render(command, { v: '3' })).status, command).toBe(0);
    }
    expect(() => render('[[ ${v} -eq 1 ]]', { v: attack })).toThrow(/\[\[ \]\]/);
    expect(run('bash', render('[[ ${v} == "it\'s" ]]', { v: "it's" })).status).toBe(0);
    expect(existsSync(CANARY)).toBe(false);
  });
});
