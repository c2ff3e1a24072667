/**
 * Quoting of template values substituted into a POSIX `sh -c` command, by where each one stands.
 * A value is always one piece of data: never split into words, globbed, expanded or run.
 */

/** Where a substituted value stands in the command text. */
export type ShellContext = 'bare' | 'double' | 'single' | 'backtick';

/** A template stands where no quoting can keep it data (a here-document body). */
export class ShellQuotingError extends Error {
  override readonly name = 'ShellQuotingError';
}

const singleQuoted = (value: string): string => `'${value.replaceAll("'", `'\\''`)}'`;

/** The text that stands for `value` in `context` so that the shell reads back exactly `value`. */
export function quoteForShell(value: string, context: ShellContext): string {
  switch (context) {
    case 'bare':
      return singleQuoted(value);
    case 'double':
      // Inside "...", only these four keep a special meaning (a backslash-newline is a continuation).
      return value.replace(/[\\"$`]/g, '\\$&');
    case 'single':
      // Close the quote, add an escaped quote, reopen: '...'\''...'.
      return value.replaceAll("'", `'\\''`);
    case 'backtick':
      // The text between backticks loses one level of backslashes before the shell parses it again.
      return singleQuoted(value).replace(/[\\`$]/g, '\\$&');
  }
}

type Frame = 'bare' | 'double' | 'single' | 'backtick' | 'subshell' | 'paren' | 'brace';

/**
 * Follows the literal text of a command to know the quoting context at each template. It tracks
 * quotes, backslashes, `$(...)`, `${...}`, backticks and here-documents, which is what decides how a
 * value must be quoted; it is not a full shell parser (it does not need to be: a context it gets
 * wrong is quoted for a stricter one and fails as a command, it does not run the value).
 */
export class ShellContextScanner {
  private readonly stack: Frame[] = ['bare'];
  private escaped = false;
  private previous = '';
  /** Here-document delimiters announced on the current line, then the one whose body we are in. */
  private heredocs: string[] = [];
  private heredocBody: string | undefined;
  private line = '';
  private pendingHeredoc: { strip: boolean; word: string; quoted: boolean } | undefined;

  private get top(): Frame {
    return this.stack[this.stack.length - 1] as Frame;
  }

  /** The context a value would stand in after the text fed so far. */
  context(): ShellContext {
    if (this.heredocBody !== undefined) {
      throw new ShellQuotingError('a template inside a here-document cannot be quoted safely: pass the value through "stdin" or "env" instead');
    }
    for (let i = this.stack.length - 1; i >= 0; i -= 1) {
      const frame = this.stack[i] as Frame;
      if (frame === 'double' || frame === 'single' || frame === 'backtick') return frame;
      if (frame === 'subshell' || frame === 'paren' || frame === 'bare') return 'bare';
    }
    return 'bare';
  }

  /** Reads literal command text. */
  feed(text: string): void {
    for (const ch of text) this.step(ch);
  }

  /** Reads a substituted value: it is data, so only a here-document line count cares about it. */
  feedValue(): void {
    this.previous = '';
    this.line += 'x';
    if (this.pendingHeredoc) this.pendingHeredoc.word += 'x';
  }

  private step(ch: string): void {
    if (this.heredocBody !== undefined) {
      if (ch === '\n') {
        const line = this.line.replace(/^\t+/, '');
        if (line === this.heredocBody || this.line === this.heredocBody) this.nextHeredoc();
        this.line = '';
      } else this.line += ch;
      return;
    }
    this.line += ch;
    const previous = this.previous;
    this.previous = ch;
    if (this.escaped) {
      this.escaped = false;
      if (this.pendingHeredoc) this.pendingHeredoc.word += ch;
      return;
    }
    const top = this.top;
    if (top === 'single') {
      if (ch === "'") this.stack.pop();
      else if (this.pendingHeredoc) this.pendingHeredoc.word += ch;
      return;
    }
    if (ch === '\\') {
      this.escaped = true;
      if (this.pendingHeredoc) this.pendingHeredoc.quoted = true;
      return;
    }
    if (top === 'double') {
      if (ch === '"') this.stack.pop();
      else if (ch === '`') this.stack.push('backtick');
      else if (ch === '(' && previous === '$') this.stack.push('subshell');
      else if (ch === '{' && previous === '$') this.stack.push('brace');
      else if (this.pendingHeredoc) this.pendingHeredoc.word += ch;
      return;
    }
    this.stepUnquoted(ch, previous, top);
  }

  private stepUnquoted(ch: string, previous: string, top: Frame): void {
    const pending = this.pendingHeredoc;
    if (pending && (ch === ' ' || ch === '\t' || ch === '\n' || ch === ';' || ch === '|' || ch === '&' || ch === ')')) {
      if (pending.word !== '') this.announceHeredoc(pending);
      else if (ch !== ' ' && ch !== '\t') this.pendingHeredoc = undefined;
    }
    switch (ch) {
      case "'":
        this.stack.push('single');
        if (this.pendingHeredoc) this.pendingHeredoc.quoted = true;
        return;
      case '"':
        this.stack.push('double');
        if (this.pendingHeredoc) this.pendingHeredoc.quoted = true;
        return;
      case '`':
        if (top === 'backtick') this.stack.pop();
        else this.stack.push('backtick');
        return;
      case '(':
        this.stack.push(previous === '$' ? 'subshell' : 'paren');
        return;
      case ')':
        if (top === 'subshell' || top === 'paren') this.stack.pop();
        return;
      case '{':
        if (previous === '$') this.stack.push('brace');
        return;
      case '}':
        if (top === 'brace') this.stack.pop();
        return;
      case '<':
        if (previous === '<' && !this.pendingHeredoc) {
          this.pendingHeredoc = { strip: false, word: '', quoted: false };
          this.previous = '';
        }
        return;
      case '\n':
        this.line = '';
        this.startHeredocBody();
        return;
      default:
        if (this.pendingHeredoc) {
          if (ch === '-' && this.pendingHeredoc.word === '' && !this.pendingHeredoc.strip) this.pendingHeredoc.strip = true;
          else if (ch !== ' ' && ch !== '\t') this.pendingHeredoc.word += ch;
        }
    }
  }

  private announceHeredoc(pending: { word: string }): void {
    this.heredocs.push(pending.word);
    this.pendingHeredoc = undefined;
  }

  private startHeredocBody(): void {
    if (this.pendingHeredoc && this.pendingHeredoc.word !== '') this.announceHeredoc(this.pendingHeredoc);
    this.pendingHeredoc = undefined;
    this.nextHeredoc();
  }

  private nextHeredoc(): void {
    this.heredocBody = this.heredocs.shift();
  }
}
