import type { Context } from 'hono';
import type * as z from '../../core/zod.ts';
import { ApiError, invalidRequest } from './api-error.ts';

/** The JSON body parsed by `schema`; an empty body counts as `{}` when `emptyIsObject`. 400 otherwise. */
export const readBody = async <S extends z.ZodMiniType>(c: Context, schema: S, options: { emptyIsObject?: boolean } = {}): Promise<z.infer<S>> => {
  const text = await c.req.text();
  let raw: unknown;
  if (text.trim() === '' && options.emptyIsObject) raw = {};
  else {
    try {
      raw = JSON.parse(text);
    } catch {
      throw new ApiError(400, 'INVALID_JSON', text.trim() === '' ? 'the request needs a JSON body' : 'the request body is not valid JSON');
    }
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw invalidRequest('body', parsed.error);
  return parsed.data;
};

/** Query string parameters parsed by `schema` (a repeated parameter keeps its last value). */
export const readQuery = <S extends z.ZodMiniType>(c: Context, schema: S): z.infer<S> => {
  const parsed = schema.safeParse(c.req.query());
  if (!parsed.success) throw invalidRequest('query', parsed.error);
  return parsed.data;
};

/** Path parameters parsed by `schema`. */
export const readParams = <S extends z.ZodMiniType>(c: Context, schema: S): z.infer<S> => {
  const parsed = schema.safeParse(c.req.param());
  if (!parsed.success) throw invalidRequest('path', parsed.error);
  return parsed.data;
};
