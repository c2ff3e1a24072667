import type { ShellContext } from './shell-quote.ts';

/**
 * The frames of `ShellContextScanner` (shell-scanner.ts), and what a command list does at the end of a
 * word: keywords where a command starts (`case`, `[[`, `let`, `for`), `case` patterns, assignments.
 */

export type CaseState = 'subject' | 'in' | 'pattern' | 'body';

export interface ListFrame {
  readonly kind: 'list';
  /** Closed by `)` (a `$( )` or a subshell), or never (the command itself, or a backtick's text). */
  readonly closer: ')' | 'none';
  /** Opened by `$(`: the word it stands in goes on after it. */
  readonly dollar: boolean;
  /** Nothing read in it yet, and a second `(` here would make `((`: arithmetic. */
  fresh: boolean;
  inWord: boolean;
  /** The current word's literal text, or null once it holds a quote, an expansion or a value (no keyword then). */
  word: string | null;
  assignment: boolean;
  /** The next word is a command's first (where keywords, `((`, `[[` and `let` are recognised). */
  commandStart: boolean;
  afterFor: boolean;
  cond: boolean;
  letArgs: boolean;
  readonly cases: CaseState[];
  /** The previous character, when it was an operator (`;` `<`), else ''. */
  operator: string;
}

export interface ArithFrame {
  readonly kind: 'arith';
  readonly closer: '))' | ']';
  /** Closed inside a word (`$((`, `$[`, a subscript), not as a command (`((`). */
  readonly inWord: boolean;
  /** A subscript's name (`name[]`), which an `=` after it makes an assignment. */
  readonly subscriptOf?: string;
  depth: number;
  closing: boolean;
}

/** What a backtick's text is read by: a scanner of its own, since that text is parsed again. */
export interface CommandScanner {
  context(): ShellContext;
  feed(text: string): void;
  feedValue(): void;
}

export interface BacktickFrame {
  readonly kind: 'backtick';
  readonly child: CommandScanner;
  readonly inDouble: boolean;
  escaped: boolean;
}

export type Frame =
  | ListFrame
  | ArithFrame
  | BacktickFrame
  | { readonly kind: 'single' | 'double' | 'comment' | 'param' }
  | { readonly kind: 'ansi'; escaped: boolean };

export interface Heredoc {
  strip: boolean;
  text: string;
  quoted: boolean;
}

export interface PendingDelimiter extends Heredoc {
  readonly frame: ListFrame;
  started: boolean;
  /** Right after `<<`: a `-` makes it `<<-`, a third `<` makes `<<<` (bash's here-string). */
  adjacent: boolean;
}

export const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const KEEPS_COMMAND_START = new Set(['if', 'then', 'else', 'elif', 'do', 'while', 'until', '!', '{', 'time']);

export const listFrame = (closer: ListFrame['closer'], dollar: boolean, cond = false): ListFrame => ({
  kind: 'list',
  closer,
  dollar,
  fresh: closer === ')',
  inWord: false,
  word: '',
  assignment: false,
  commandStart: !cond,
  afterFor: false,
  cond,
  letArgs: false,
  cases: [],
  operator: '',
});

export function endCommand(frame: ListFrame): void {
  frame.commandStart = !frame.cond;
  frame.letArgs = false;
  frame.afterFor = false;
}

/** A word ended: keywords where a command starts, `case` patterns, `[[ ]]`, assignments. */
export function endWord(frame: ListFrame): void {
  if (!frame.inWord) return;
  const { word, assignment, cases } = frame;
  frame.inWord = false;
  frame.word = '';
  frame.assignment = false;
  frame.afterFor = false;
  const last = cases.length - 1;
  switch (cases[last]) {
    case 'subject':
      cases[last] = 'in';
      return;
    case 'in':
      if (word === 'in') cases[last] = 'pattern';
      return;
    case 'pattern':
      if (word === 'esac') cases.pop();
      return;
    default:
  }
  if (frame.cond) {
    if (word === ']]') frame.cond = false;
    return;
  }
  if (!frame.commandStart || assignment) return;
  frame.commandStart = word !== null && KEEPS_COMMAND_START.has(word);
  if (word === 'case') cases.push('subject');
  else if (word === 'esac' && cases[last] === 'body') cases.pop();
  else if (word === '[[') frame.cond = true;
  else if (word === 'let') frame.letArgs = true;
  else if (word === 'for') frame.afterFor = true;
}
