import type { Heredoc, ListFrame, PendingDelimiter } from './shell-frames.ts';

/**
 * The here-documents of a command: the delimiter word being read after `<<` or `<<-`, the ones
 * announced on the current line, and the body being read (from the next newline to the line that is
 * its delimiter, after leading tabs for `<<-`).
 */
export class Heredocs {
  delimiter: PendingDelimiter | undefined;
  body: Heredoc | undefined;
  private readonly announced: Heredoc[] = [];
  private line = '';

  open(frame: ListFrame): void {
    this.delimiter = { frame, strip: false, text: '', quoted: false, started: false, adjacent: true };
  }

  /** A character of the delimiter word (its quotes removed). */
  append(ch: string): void {
    const delimiter = this.delimiter;
    if (delimiter === undefined) return;
    delimiter.text += ch;
    delimiter.started = true;
    delimiter.adjacent = false;
  }

  /** Any quoting in the delimiter word makes the body literal (no expansion, no line joining). */
  markQuoted(): void {
    if (this.delimiter !== undefined) this.delimiter.quoted = true;
  }

  announce(): void {
    const delimiter = this.delimiter as PendingDelimiter;
    this.announced.push({ strip: delimiter.strip, text: delimiter.text, quoted: delimiter.quoted });
    this.delimiter = undefined;
  }

  /** An unquoted newline: the bodies announced on its line follow, in order. */
  startBodies(): void {
    if (this.delimiter?.started) this.announce();
    this.delimiter = undefined;
    this.body = this.announced.shift();
    this.line = '';
  }

  stepBody(ch: string): void {
    const body = this.body as Heredoc;
    if (ch !== '\n') {
      this.line += ch;
      return;
    }
    // In a body whose delimiter is unquoted, a backslash-newline joins two lines before the delimiter is looked for.
    if (!body.quoted && /(^|[^\\])(\\\\)*\\$/.test(this.line)) {
      this.line = this.line.slice(0, -1);
      return;
    }
    const line = body.strip ? this.line.replace(/^\t+/, '') : this.line;
    if (line === body.text) this.body = this.announced.shift();
    this.line = '';
  }
}
