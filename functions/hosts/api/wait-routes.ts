import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { CALLBACK_TOKEN_PATTERN, MAX_COMMENT_CHARS, MAX_EVENT_PAYLOAD_BYTES, RunIdSchema, RunNotFoundError, WaitNotOpenError } from '../../core/index.ts';
import * as z from '../../core/zod.ts';
import type { ApiDeps } from './api-deps.ts';
import { ApiError, sendError } from './api-error.ts';
import { RunIdParamSchema } from './api-schemas.ts';
import { readBody, readParams } from './request-parsing.ts';
import { answerAndContinue } from './wait-operations.ts';

/** `POST /runs/{id}/approve`: answers a gate or a held repair. */
export const ApproveBodySchema = z.strictObject({
  /** true denies a gate, or rejects a held repair. */
  deny: z._default(z.boolean({ error: 'deny is true (deny or reject) or false (approve)' }), false),
  comment: z.optional(z.string().check(z.maxLength(MAX_COMMENT_CHARS, `comment is at most ${MAX_COMMENT_CHARS} characters`))),
  /** The wait the answer is for (`waiting.wait_id` of the report), so an answer meant for an earlier wait is refused. */
  wait_id: z.optional(z.string().check(z.maxLength(64))),
});

const CallbackParamsSchema = z.object({
  id: RunIdSchema,
  token: z.string().check(z.regex(CALLBACK_TOKEN_PATTERN, 'a callback token is 43 letters, digits, _ or -')),
});

/** One answer for every refused callback, so that a caller without the token learns nothing about the run. */
const callbackRefused = (message: string) => new ApiError(404, 'CALLBACK_NOT_OPEN', message);
const CALLBACK_REFUSED =
  'no open wait takes this callback: its token was used already, is not this run’s, or the run does not wait for it now (a sender may retry later)';

/**
 * Answers to waiting runs (DESIGN 7b): a person's approval through the API, and a third party's event on
 * a callback URL. The callback route takes no other credential than its token (on AWS its method has no
 * IAM authorization), checks it against the hash the wait holds, and never writes the token anywhere.
 */
export const makeWaitRoutes = (deps: ApiDeps): Hono => {
  const app = new Hono();

  app.post('/runs/:id/approve', async (c) => {
    const { id } = readParams(c, RunIdParamSchema);
    const body = await readBody(c, ApproveBodySchema, { emptyIsObject: true });
    const answered = await answerAndContinue(deps, id, {
      kind: 'decision',
      approved: !body.deny,
      by: c.req.header('x-flowmend-user') ?? 'api',
      ...(body.comment === undefined ? {} : { comment: body.comment }),
      ...(body.wait_id === undefined ? {} : { waitId: body.wait_id }),
    });
    return c.json(
      { run_id: id, answered: answered.wait.answer?.outcome, wait: { kind: answered.wait.kind, wait_id: answered.wait.id }, continued: answered.continued },
      202,
    );
  });

  app.post(
    '/callbacks/:id/:token',
    bodyLimit({
      maxSize: MAX_EVENT_PAYLOAD_BYTES,
      onError: (c) => sendError(c, new ApiError(413, 'PAYLOAD_TOO_LARGE', `an event payload is at most ${MAX_EVENT_PAYLOAD_BYTES} bytes`)),
    }),
    async (c) => {
      const params = CallbackParamsSchema.safeParse(c.req.param());
      if (!params.success) throw callbackRefused(CALLBACK_REFUSED);
      const text = await c.req.text();
      let payload: unknown = null;
      if (text.trim() !== '') {
        try {
          payload = JSON.parse(text);
        } catch {
          throw new ApiError(400, 'INVALID_JSON', 'an event payload is JSON (or an empty body)');
        }
      }
      try {
        const answered = await answerAndContinue(deps, params.data.id, { kind: 'event', token: params.data.token, payload });
        return c.json({ accepted: true, continued: answered.continued }, 202);
      } catch (error) {
        // An unknown run is refused like a forged token: the caller learns no more than the token proves.
        if (error instanceof WaitNotOpenError || error instanceof RunNotFoundError) throw callbackRefused(CALLBACK_REFUSED);
        throw error;
      }
    },
  );

  return app;
};
