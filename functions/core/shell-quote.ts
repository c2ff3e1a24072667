/**
 * Quoting of template values substituted into a POSIX `sh -c` command, by where each one stands.
 * A value is always one piece of data: never split into words, globbed, expanded or run. Where it
 * stands is told by `ShellContextScanner` (shell-scanner.ts).
 */

/** The quoting a value stands in: a bare word, "...", '...', or a `#` comment. */
export type ShellQuote = 'bare' | 'double' | 'single' | 'comment';

/** Where a substituted value stands in the command text. */
export interface ShellContext {
  readonly quote: ShellQuote;
  /**
   * `integer`: shell arithmetic (`$(( ))`, `(( ))`, `$[ ]`, `let`, an array subscript), where bash
   * evaluates any text as an expression (`a[$(cmd)]` runs cmd), so only an integer is data.
   * `operand`: inside bash's `[[ ]]`, whose `-eq`/`-lt`... evaluate a quoted operand the same way.
   */
  readonly arithmetic?: 'integer' | 'operand';
  /** The backtick substitutions around it, outermost first: each one strips a level of backslashes. */
  readonly backticks: number;
}

/** A template stands where no quoting can keep it data, or its value cannot be data there. */
export class ShellQuotingError extends Error {
  override readonly name = 'ShellQuotingError';
}

const singleQuoted = (value: string): string => `'${value.replaceAll("'", `'\\''`)}'`;

const INTEGER = /^\s*([+-]?)0*(\d+)\s*$/;

/** An integer as shell arithmetic reads it: decimal (no leading zero, which would be octal), negatives in parentheses. */
function integerText(value: string): string {
  const match = INTEGER.exec(value);
  if (match === null) {
    const shown = value.length > 40 ? `${value.slice(0, 40)}...` : value;
    throw new ShellQuotingError(
      `the value ${JSON.stringify(shown)} stands in shell arithmetic ($(( )), (( )), let or an array subscript), where only an integer is data`,
    );
  }
  const digits = match[2] as string;
  return match[1] === '-' && digits !== '0' ? `(-${digits})` : digits;
}

/** The text that stands for `value` in `context` so that the shell reads back exactly `value`. */
export function quoteForShell(value: string, context: ShellContext): string {
  let text: string;
  if (context.arithmetic === 'integer') text = integerText(value);
  else {
    if (context.arithmetic === 'operand' && value.includes('[')) {
      throw new ShellQuotingError(
        'a value holding "[" stands inside bash\'s [[ ]], whose arithmetic operators (-eq, -lt...) evaluate it as code (a[$(cmd)]): compare it with [ ] or case instead',
      );
    }
    switch (context.quote) {
      case 'bare':
        text = singleQuoted(value);
        break;
      case 'double':
        // Inside "...", only these four keep a special meaning (a backslash-newline is a continuation).
        text = value.replace(/[\\"$`]/g, '\\$&');
        break;
      case 'single':
        // Close the quote, add an escaped quote, reopen: '...'\''...'.
        text = value.replaceAll("'", `'\\''`);
        break;
      case 'comment':
        // A comment ends at a newline, and what follows it would run: the comment keeps the value on one line.
        text = value.replaceAll('\n', ' ');
        break;
    }
  }
  // The text between backticks loses one level of backslashes (before \, ` and $) before the shell parses it.
  for (let layer = 0; layer < context.backticks; layer += 1) text = text.replace(/[\\`$]/g, '\\$&');
  return text;
}
