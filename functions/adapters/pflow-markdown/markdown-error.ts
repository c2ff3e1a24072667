/** A `.pflow.md` file that pflow's format does not allow, at a line and column of the file (both from 1). */
export class MarkdownError extends Error {
  override readonly name = 'MarkdownError';
  constructor(
    readonly line: number,
    readonly column: number,
    message: string,
    readonly hint?: string,
    readonly code = 'MARKDOWN_INVALID',
  ) {
    super(message);
  }
}
