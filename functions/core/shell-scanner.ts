import {
  type ArithFrame,
  type BacktickFrame,
  type CaseState,
  endCommand,
  endWord,
  type Frame,
  type ListFrame,
  listFrame,
  NAME,
  type PendingDelimiter,
} from './shell-frames.ts';
import { Heredocs } from './shell-heredocs.ts';
import { type ShellContext, ShellQuotingError } from './shell-quote.ts';

/**
 * Follows the literal text of a `sh -c` command, as the POSIX token rules (and bash's, where bash
 * parses further) read it, to know where each template stands: words and `#` comments (only at the
 * start of a word), '...', "...", backslashes and line continuations, `$( )`, backticks (their text
 * parsed again, one level of backslashes less), here-documents (`<<`, `<<-`, quoted delimiters,
 * continuation lines in unquoted bodies), `case` patterns (whose `)` closes nothing), and shell
 * arithmetic: `$(( ))`, `(( ))`, `$[ ]`, `let` and `name[...]` subscripts, plus bash's `[[ ]]`.
 * Where dash and bash read a construct differently (`$'...'` holding `\'`, backticks inside "...",
 * quotes inside a "${...}"), or no quoting can keep a value data (a here-document, `${...}`), a
 * template there is refused with `ShellQuotingError`, never quoted by a guess.
 */

export class ShellContextScanner {
  private readonly stack: Frame[] = [listFrame('none', false)];
  private escaped = false;
  private dollar = false;
  private readonly heredocs = new Heredocs();
  /** Set once the text holds a construct dash and bash end differently: no later template can be placed. */
  private poisoned: string | undefined;

  private get top(): Frame {
    return this.stack[this.stack.length - 1] as Frame;
  }

  /** The context a value would stand in after the text fed so far; throws where no quoting keeps it data. */
  context(): ShellContext {
    const refuse = (where: string): never => {
      throw new ShellQuotingError(`a template ${where} cannot be quoted safely: pass the value through "stdin" or "env" instead`);
    };
    if (this.poisoned !== undefined) refuse(`after ${this.poisoned}`);
    if (this.heredocs.body !== undefined) refuse('inside a here-document');
    if (this.heredocs.delimiter !== undefined) refuse('in a here-document delimiter');
    if (this.escaped || this.dollar) refuse(`right after "${this.escaped ? '\\' : '$'}"`);
    const top = this.top;
    switch (top.kind) {
      case 'backtick': {
        if (top.inDouble) refuse('inside backticks inside "..." (which dash and bash unescape differently; use $( ) there)');
        const inner = top.child.context();
        return { ...inner, backticks: inner.backticks + 1 };
      }
      case 'param':
        return refuse('inside a shell ${...} expansion');
      case 'ansi':
        return refuse("inside $'...'");
      case 'comment':
        return { quote: 'comment', backticks: 0 };
      default:
        return { quote: top.kind === 'single' || top.kind === 'double' ? top.kind : 'bare', ...this.arithmetic(), backticks: 0 };
    }
  }

  /** Whether the value stands in arithmetic: any arithmetic frame since the innermost command list, or that list's `let` / `[[ ]]`. */
  private arithmetic(): Pick<ShellContext, 'arithmetic'> {
    for (let i = this.stack.length - 1; i >= 0; i -= 1) {
      const frame = this.stack[i] as Frame;
      if (frame.kind === 'arith') return { arithmetic: 'integer' };
      if (frame.kind === 'list') {
        if (frame.letArgs) return { arithmetic: 'integer' };
        return frame.cond ? { arithmetic: 'operand' } : {};
      }
    }
    return {};
  }

  /** Reads literal command text. */
  feed(text: string): void {
    for (const ch of text) this.step(ch);
  }

  /** Reads a substituted value: data, one part of the word it stands in. */
  feedValue(): void {
    const top = this.top;
    if (top.kind === 'backtick') top.child.feedValue();
    else if (top.kind === 'list') this.wordChar(top, null);
  }

  private step(ch: string): void {
    if (this.heredocs.body !== undefined) {
      this.heredocs.stepBody(ch);
      return;
    }
    const top = this.top;
    switch (top.kind) {
      case 'backtick':
        this.stepBacktick(top, ch);
        return;
      case 'single':
        if (ch === "'") this.stack.pop();
        else this.heredocs.append(ch);
        return;
      case 'comment':
        if (ch === '\n') {
          this.stack.pop();
          this.step(ch);
        }
        return;
      case 'ansi':
        if (top.escaped) {
          top.escaped = false;
          if (ch === "'") this.poisoned ??= "$'...' holding \\' (bash reads it as a quote, dash as the end)";
        } else if (ch === '\\') top.escaped = true;
        else if (ch === "'") this.stack.pop();
        return;
    }
    if (this.escaped) {
      this.escaped = false;
      // A backslash-newline is removed before anything else reads the text.
      if (ch !== '\n' && top.kind === 'list') this.wordChar(top, null, ch);
      return;
    }
    if (this.heredocs.delimiter !== undefined && top.kind === 'double') {
      this.delimiterInDouble(ch);
      return;
    }
    const dollar = this.dollar;
    this.dollar = false;
    if (ch === '\\') {
      this.escaped = true;
      this.heredocs.markQuoted();
      return;
    }
    if (dollar && this.afterDollar(ch, top)) return;
    switch (top.kind) {
      case 'double':
        this.stepDouble(ch);
        return;
      case 'param':
        this.stepParam(ch);
        return;
      case 'arith':
        this.stepArith(top, ch);
        return;
      case 'list':
        this.stepList(top, ch);
        return;
    }
  }

  /** `$(`, `$((`, `${`, `$[` and bash's `$'`: answers whether `ch` was taken. */
  private afterDollar(ch: string, top: Frame): boolean {
    switch (ch) {
      case '(':
        this.stack.push(listFrame(')', true));
        return true;
      case '{':
        this.stack.push({ kind: 'param' });
        return true;
      case '[':
        this.stack.push({ kind: 'arith', closer: ']', inWord: true, depth: 0, closing: false });
        return true;
      case "'":
        if (top.kind === 'double') return false;
        this.stack.push({ kind: 'ansi', escaped: false });
        return true;
      default:
        return false;
    }
  }

  private openQuote(ch: string): boolean {
    switch (ch) {
      case "'":
        this.stack.push({ kind: 'single' });
        break;
      case '"':
        this.stack.push({ kind: 'double' });
        break;
      case '`':
        this.stack.push({ kind: 'backtick', child: new ShellContextScanner(), inDouble: this.insideDouble(), escaped: false });
        return true;
      case '$':
        this.dollar = true;
        return true;
      default:
        return false;
    }
    this.heredocs.markQuoted();
    return true;
  }

  private insideDouble(): boolean {
    for (let i = this.stack.length - 1; i >= 0; i -= 1) {
      const kind = (this.stack[i] as Frame).kind;
      if (kind === 'double') return true;
      if (kind === 'list') return false;
    }
    return false;
  }

  private stepDouble(ch: string): void {
    if (ch === '"') this.stack.pop();
    else if (!(ch !== "'" && this.openQuote(ch))) this.heredocs.append(ch);
  }

  private stepParam(ch: string): void {
    if (ch === '}') this.stack.pop();
    else if ((ch === "'" || ch === '"') && this.insideDouble()) this.poisoned ??= 'a quote inside "${...}" (read differently by dash and bash)';
    else this.openQuote(ch);
  }

  private stepArith(frame: ArithFrame, ch: string): void {
    if (frame.closing) {
      frame.closing = false;
      this.closeArith(frame);
      if (ch === ')') return;
      this.step(ch);
      return;
    }
    const open = frame.closer === ']' ? '[' : '(';
    const close = frame.closer === ']' ? ']' : ')';
    if (ch === open) frame.depth += 1;
    else if (ch === close) {
      if (frame.depth > 0) frame.depth -= 1;
      else if (frame.closer === ']') this.closeArith(frame);
      else frame.closing = true;
    } else this.openQuote(ch);
  }

  private closeArith(frame: ArithFrame): void {
    this.stack.pop();
    const parent = this.top;
    if (parent.kind !== 'list') return;
    if (frame.inWord) this.wordChar(parent, frame.subscriptOf ?? null);
    else parent.commandStart = false;
  }

  private stepBacktick(frame: BacktickFrame, ch: string): void {
    if (frame.escaped) {
      frame.escaped = false;
      // Inside backticks a backslash only quotes \, ` and $ (and " within "..."): the text is then parsed again.
      if (!(ch === '\\' || ch === '`' || ch === '$' || (frame.inDouble && ch === '"'))) frame.child.feed('\\');
      frame.child.feed(ch);
    } else if (ch === '\\') frame.escaped = true;
    else if (ch === '`') {
      this.stack.pop();
      const parent = this.top;
      if (parent.kind === 'list') this.wordChar(parent, null);
    } else frame.child.feed(ch);
  }

  private stepList(frame: ListFrame, ch: string): void {
    const operator = frame.operator;
    frame.operator = '';
    if (frame.fresh) {
      frame.fresh = false;
      if (ch === '(') {
        this.stack.pop();
        this.stack.push({ kind: 'arith', closer: '))', inWord: frame.dollar, depth: 0, closing: false });
        return;
      }
    }
    const delimiter = this.heredocs.delimiter;
    if (delimiter?.frame === frame && this.stepDelimiter(delimiter, ch)) return;
    const state = frame.cases[frame.cases.length - 1];
    switch (ch) {
      case ' ':
      case '\t':
        endWord(frame);
        return;
      case '\n':
        endWord(frame);
        endCommand(frame);
        this.heredocs.startBodies();
        return;
      case ';':
      case '&':
        endWord(frame);
        if (operator === ';' && state === 'body') frame.cases[frame.cases.length - 1] = 'pattern';
        if (state !== 'pattern') endCommand(frame);
        frame.operator = ch;
        return;
      case '|':
        endWord(frame);
        if (state !== 'pattern') endCommand(frame);
        return;
      case '(':
        this.openParen(frame, state);
        return;
      case ')':
        this.closeParen(frame, state);
        return;
      case '<':
      case '>':
        endWord(frame);
        if (ch === '<' && operator === '<') this.heredocs.open(frame);
        else frame.operator = ch;
        return;
      case '#':
        if (!frame.inWord) {
          this.stack.push({ kind: 'comment' });
          return;
        }
        this.wordChar(frame, frame.word, ch);
        return;
      case '[':
        if (frame.inWord && frame.word !== null && NAME.test(frame.word)) {
          this.stack.push({ kind: 'arith', closer: ']', inWord: true, subscriptOf: `${frame.word}[]`, depth: 0, closing: false });
          return;
        }
        this.wordChar(frame, frame.word === null ? null : frame.word + ch, ch);
        return;
      case '=':
        if (frame.inWord && frame.word !== null && /^[A-Za-z_][A-Za-z0-9_]*(\[\])?$/.test(frame.word)) frame.assignment = true;
        this.wordChar(frame, null, ch);
        return;
      default:
        if (this.openQuote(ch)) {
          this.wordChar(frame, null);
          return;
        }
        this.wordChar(frame, frame.word === null ? null : frame.word + ch, ch);
        return;
    }
  }

  private openParen(frame: ListFrame, state: CaseState | undefined): void {
    const arithmeticAllowed = !frame.inWord && (frame.commandStart || frame.afterFor);
    endWord(frame);
    if (state === 'pattern') return;
    const sub = listFrame(')', false, frame.cond);
    sub.fresh = arithmeticAllowed;
    this.stack.push(sub);
  }

  private closeParen(frame: ListFrame, state: CaseState | undefined): void {
    endWord(frame);
    if (state === 'pattern') {
      frame.cases[frame.cases.length - 1] = 'body';
      frame.commandStart = true;
      return;
    }
    if (frame.closer !== ')') return;
    this.stack.pop();
    const parent = this.top;
    if (parent.kind !== 'list') return;
    if (frame.dollar) this.wordChar(parent, null);
    else parent.commandStart = false;
  }

  /** Answers whether `ch` was taken as part of the delimiter word after `<<`. */
  private stepDelimiter(delimiter: PendingDelimiter, ch: string): boolean {
    const adjacent = delimiter.adjacent;
    delimiter.adjacent = false;
    if (adjacent && ch === '<') {
      this.heredocs.delimiter = undefined;
      return true;
    }
    if (adjacent && ch === '-') {
      delimiter.strip = true;
      return true;
    }
    if (ch === ' ' || ch === '\t') {
      if (!delimiter.started) return true;
      this.heredocs.announce();
      return false;
    }
    if (';&|()<>\n'.includes(ch)) {
      if (delimiter.started) this.heredocs.announce();
      else this.heredocs.delimiter = undefined;
      return false;
    }
    if (ch === '$' || ch === '`') this.poisoned ??= 'a here-document delimiter holding $ or `';
    if (ch === "'" || ch === '"') this.openQuote(ch);
    else this.heredocs.append(ch);
    return true;
  }

  /** Inside "..." of a delimiter the text is taken as it is; an escape or an expansion there is too rare to guess at. */
  private delimiterInDouble(ch: string): void {
    if (ch === '"') this.stack.pop();
    else if (ch === '\\' || ch === '$' || ch === '`') this.poisoned ??= 'a here-document delimiter holding \\, $ or ` inside "..."';
    else this.heredocs.append(ch);
  }

  private wordChar(frame: ListFrame, word: string | null, ch?: string): void {
    frame.fresh = false;
    frame.inWord = true;
    frame.word = word;
    if (ch !== undefined) this.heredocs.append(ch);
  }
}
