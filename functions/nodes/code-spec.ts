import type { NodeTypeSpec } from '../core/index.ts';
import * as z from '../core/zod.ts';

const DEFAULT_TIMEOUT_S = 30;

/** pflow's `code` node: Python with `inputs` bound as variables and `result` (and optionally `next`) read back. */
export const CodeParamsSchema = z.strictObject({
  code: z.string({ error: 'code is required: the Python to run (a ```python code block)' }).check(z.minLength(1, 'code must not be empty')),
  inputs: z._default(z.record(z.string().check(z.regex(/^[A-Za-z_]\w*$/, 'an input name is a Python identifier')), z.unknown()), {}),
  timeout: z.optional(z.number({ error: 'timeout is a number of seconds' }).check(z.positive('timeout must be greater than 0'))),
  requires: z.optional(
    z.array(z.string()).check(z.maxLength(0, 'requires is not supported: flowmend installs no packages; use what the python3 where the node runs has')),
  ),
});
export type CodeParams = z.infer<typeof CodeParamsSchema>;

export const codeTimeoutOf = (params: Record<string, unknown>): number =>
  typeof params.timeout === 'number' && params.timeout > 0 ? params.timeout : DEFAULT_TIMEOUT_S;

/** What the engine knows of the code node without spawning Python (validation, timeouts). */
export const codeSpec: NodeTypeSpec = {
  type: 'code',
  paramsSchema: CodeParamsSchema,
  outputKeys: ['result', 'stdout', 'stderr'],
  // Python can do anything a shell can: it counts as side-effecting (a resume never runs it twice).
  sideEffects: () => true,
  timeoutS: codeTimeoutOf,
};
