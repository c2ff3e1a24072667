/**
 * Template values in a JSONata `expression` stay data: where a template stands as code it becomes a
 * variable (`$__flowmend_0`) bound to the value (with its type), and inside a string literal, a
 * comment or a regular expression its text is written with every character but letters, digits, `_`
 * and space as a `\uXXXX` escape, so it cannot end the literal it stands in. So
 * `"Hello ${name}"` with `name = '" & $string($$) & "'` is the text `Hello " & $string($$) & "`,
 * never an expression. A template inside a backtick field name (which has no escapes) is refused.
 */

/** Where a substituted value stands in a JSONata expression. */
export type JsonataContext = 'code' | 'string' | 'name';

/** The prefix of the variables that hold template values; `bindings` carries them to the runner. */
export const TEMPLATE_BINDING_PREFIX = '__flowmend_';

type Mode = 'code' | 'dq' | 'sq' | 'name' | 'comment' | 'regex';

/** Follows JSONata's tokens (strings, `names`, comments, regexes) far enough to tell each template's context. */
export class JsonataContextScanner {
  private mode: Mode = 'code';
  private escaped = false;
  /** The last significant character read as code: a `/` after a value divides, elsewhere it starts a regex. */
  private last = '';
  private previous = '';
  /** A `/` was read as code: `/*` opens a comment, else it starts a regex (or divides, after a value). */
  private slash: 'regex' | 'divide' | undefined;

  context(): JsonataContext {
    if (this.slash === 'regex') return 'string';
    switch (this.mode) {
      case 'code':
        return 'code';
      case 'name':
        return 'name';
      default:
        return 'string';
    }
  }

  feed(text: string): void {
    for (const ch of text) this.step(ch);
  }

  /** A value stood here: as code it is an operand (a `/` after it divides). */
  feedValue(): void {
    if (this.slash === 'regex') this.mode = 'regex';
    this.slash = undefined;
    if (this.mode === 'code') this.last = 'v';
    this.previous = '';
  }

  private step(ch: string): void {
    const previous = this.previous;
    this.previous = ch;
    switch (this.mode) {
      case 'dq':
      case 'sq':
      case 'regex':
        if (this.escaped) this.escaped = false;
        else if (ch === '\\') this.escaped = true;
        else if (ch === (this.mode === 'dq' ? '"' : this.mode === 'sq' ? "'" : '/')) this.endLiteral();
        return;
      case 'name':
        if (ch === '`') this.endLiteral();
        return;
      case 'comment':
        if (previous === '*' && ch === '/') {
          this.mode = 'code';
          this.previous = '';
        }
        return;
      case 'code':
        this.stepCode(ch);
        return;
    }
  }

  private endLiteral(): void {
    this.mode = 'code';
    this.last = 'v';
  }

  private stepCode(ch: string): void {
    const slash = this.slash;
    this.slash = undefined;
    if (slash !== undefined) {
      if (ch === '*') {
        this.mode = 'comment';
        this.previous = '';
        return;
      }
      if (slash === 'regex') {
        this.mode = 'regex';
        this.step(ch);
        return;
      }
      this.last = '/';
    }
    if (ch === '"') this.mode = 'dq';
    else if (ch === "'") this.mode = 'sq';
    else if (ch === '`') this.mode = 'name';
    else if (ch === '/') this.slash = /[\w$)\]}*]/.test(this.last) ? 'divide' : 'regex';
    else if (!/\s/.test(ch)) this.last = ch;
  }
}

/** A value's text inside a JSONata string, regex or comment: nothing in it can end what it stands in. */
export const escapeForJsonata = (text: string): string => text.replace(/[^A-Za-z0-9_ ]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
