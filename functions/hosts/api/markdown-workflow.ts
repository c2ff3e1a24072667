import type { Context } from 'hono';
import { formatIssues } from '../../core/index.ts';
import { ApiError } from './api-error.ts';
import { MarkdownRunQuerySchema, type StartRunBody, StartRunBodySchema } from './api-schemas.ts';
import { readQuery } from './request-parsing.ts';

/** Media types that carry a pflow `.pflow.md` workflow as the whole request body. */
const MARKDOWN_TYPES = ['text/markdown', 'text/x-markdown', 'text/x-pflow-markdown'];

/** Whether the request's body is a `.pflow.md` workflow (by its Content-Type). */
export const hasMarkdownBody = (c: Context): boolean => {
  const type = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase() ?? '';
  return MARKDOWN_TYPES.includes(type);
};

/**
 * A pflow `.pflow.md` workflow compiled to its IR, or a 422 whose issues name the line and column. The
 * parser (and its YAML library) load on the first markdown request only.
 */
export const compileMarkdown = async (text: string): Promise<unknown> => {
  const { parsePflowMarkdown } = await import('../../adapters/pflow-markdown/parse-pflow-markdown.ts');
  // No file name: the issues say "line L, column C" of the body.
  const parsed = parsePflowMarkdown(text, '');
  if (!parsed.ok)
    throw new ApiError(422, 'INVALID_WORKFLOW', `the .pflow.md workflow does not parse:\n${formatIssues(parsed.issues)}`, { issues: parsed.issues });
  return parsed.raw;
};

/** A workflow given inline as JSON, or as the text of a `.pflow.md` (a string where the JSON form has an object). */
export const workflowFromField = async (workflow: unknown): Promise<unknown> => (typeof workflow === 'string' ? compileMarkdown(workflow) : workflow);

/** `POST /runs` with a `.pflow.md` body: the workflow from the body, the run's options from the query string. */
export const markdownStartBody = async (c: Context): Promise<StartRunBody> => {
  const query = readQuery(c, MarkdownRunQuerySchema);
  let params: unknown = {};
  if (query.params !== undefined) {
    try {
      params = JSON.parse(query.params);
    } catch {
      throw new ApiError(400, 'INVALID_REQUEST', 'bad query: params is a JSON object of input values, e.g. params={"name":"Ada"}');
    }
  }
  const workflow = await compileMarkdown(await c.req.text());
  const body = StartRunBodySchema.safeParse({
    workflow,
    params,
    ...(query.name === undefined ? {} : { name: query.name }),
    ...(query.repair === undefined ? {} : { repair: query.repair === 'true' }),
    ...(query.max_repairs === undefined ? {} : { max_repairs: query.max_repairs }),
    ...(query.no_cache === undefined ? {} : { no_cache: query.no_cache === 'true' }),
    ...(query.mode === undefined ? {} : { mode: query.mode }),
  });
  if (!body.success) throw new ApiError(400, 'INVALID_REQUEST', `bad query: ${body.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return body.data;
};
