import type { NodeTypeSpec } from '../core/index.ts';
import * as z from '../core/zod.ts';

/**
 * What the engine knows of the transform node without JSONata: the Advance and StartRun Lambdas
 * validate and time transform nodes from this, and only the runner (transform.ts) bundles jsonata.
 */
const DEFAULT_TIMEOUT_S = 30;

export const TransformParamsSchema = z.strictObject({
  expression: z
    .string({ error: 'expression is required: a JSONata expression, e.g. "items[price > 10].name"' })
    .check(z.minLength(1, 'expression must not be empty')),
  input: z._default(z.unknown(), null),
  /** Values the expression reads as variables: `"bindings": {"min": "${limit}"}` and `$min` in the expression. */
  bindings: z.optional(z.record(z.string().check(z.regex(/^[A-Za-z_]\w*$/, 'binding names are letters, digits and _')), z.unknown())),
  timeout_s: z.optional(z.number({ error: 'timeout_s must be a number of seconds' }).check(z.positive('timeout_s must be greater than 0'))),
  /** Paste template values into `expression` as JSONata code instead of binding them as data; `validate` warns on it. */
  raw: z.optional(z.boolean({ error: 'raw must be true or false' })),
});
export type TransformParams = z.infer<typeof TransformParamsSchema>;

export const timeoutOf = (params: Record<string, unknown>): number =>
  typeof params.timeout_s === 'number' && params.timeout_s > 0 ? params.timeout_s : DEFAULT_TIMEOUT_S;

export const transformSpec: NodeTypeSpec = {
  type: 'transform',
  paramsSchema: TransformParamsSchema,
  outputKeys: ['result'],
  sideEffects: () => false,
  templateQuoting: (params): Readonly<Record<string, 'jsonata'>> => (params.raw === true ? {} : { expression: 'jsonata' }),
  timeoutS: timeoutOf,
};
