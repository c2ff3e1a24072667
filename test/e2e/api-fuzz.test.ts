import { rmSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killStrayChildren, makeTempDir } from '../support/cli-process.ts';
import { request, type ServeProcess, startServe } from '../support/serve-process.ts';

// Property tests of the API's edges over real HTTP against `flowmend serve`: whatever body a client sends
// to a route that takes one, the answer is never a 5xx and never a stack; a refusal is a 4xx in the API's
// error shape. Bodies are any JSON, any text, and objects built from each route's own field names (so
// that they get past the JSON parse into the schema and the checks behind it).
let dir: string;
let serve: ServeProcess;
let api: string;
let runId: string;
beforeAll(async () => {
  dir = makeTempDir('api-fuzz');
  serve = await startServe(join(dir, 'state'));
  api = serve.url;
  // A finished run, so resume and cancel bodies reach past "no such run" too.
  const started = await request<{ run_id: string }>(api, 'POST', '/runs', {
    body: { workflow: { nodes: [{ id: 'a', type: 'shell', params: { command: 'exit 3' } }] }, repair: false },
  });
  runId = started.body.run_id;
  await request(api, 'PUT', '/workflows/fuzzed', { body: { nodes: [{ id: 'a', type: 'shell', params: { command: 'echo hi' } }] } });
});
afterAll(async () => {
  await serve?.stop();
  killStrayChildren();
  rmSync(dir, { recursive: true, force: true });
});

const anyJson = fc.jsonValue({ maxDepth: 4 });
const workflowish = fc.oneof(
  anyJson,
  fc.record(
    {
      nodes: fc.array(
        fc.record({ id: fc.oneof(fc.string(), anyJson), type: fc.constantFrom('shell', 'http', 'nope', ''), params: anyJson }, { requiredKeys: [] }),
        { maxLength: 3 },
      ),
      edges: anyJson,
      inputs: anyJson,
    },
    { requiredKeys: [] },
  ),
);
const fields = {
  '/runs': fc.record(
    {
      workflow: workflowish,
      workflow_name: fc.oneof(fc.constant('fuzzed'), anyJson),
      version: anyJson,
      params: anyJson,
      repair: anyJson,
      max_repairs: anyJson,
      mode: anyJson,
      name: anyJson,
      auto_approve: anyJson,
      repair_approval: anyJson,
    },
    { requiredKeys: [] },
  ),
  resume: fc.record({ workflow: workflowish, repair: anyJson, max_repairs: anyJson, repair_approval: anyJson }, { requiredKeys: [] }),
  approve: fc.record({ deny: fc.oneof(fc.boolean(), anyJson), comment: anyJson, wait_id: anyJson }, { requiredKeys: [] }),
  schedule: fc.record(
    {
      expression: fc.oneof(fc.constantFrom('rate(5 minutes)', 'cron(0 2 * * ? *)', 'at(2027-01-01T00:00:00)'), anyJson),
      timezone: fc.oneof(fc.constantFrom('UTC', 'Mars/Olympus'), anyJson),
      params: anyJson,
      enabled: anyJson,
    },
    { requiredKeys: [] },
  ),
};
/** A body as sent: JSON of some value, or any text (not JSON at all, truncated JSON). */
const bodyOf = (shaped: fc.Arbitrary<unknown>) =>
  fc.oneof(
    shaped.map((v) => JSON.stringify(v)),
    anyJson.map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 200 }),
  );

/** `{id}` is the failed run made before the tests. */
const routes: [string, string, fc.Arbitrary<string>][] = [
  ['POST', '/runs', bodyOf(fields['/runs'])],
  ['POST', '/runs/{id}/resume', bodyOf(fields.resume)],
  ['POST', '/runs/{id}/cancel', bodyOf(anyJson)],
  ['POST', '/runs/{id}/approve', bodyOf(fields.approve)],
  // A token-shaped path: no wait takes it, so every body must end in a 4xx, never a 5xx.
  ['POST', `/callbacks/{id}/${'A'.repeat(43)}`, bodyOf(anyJson)],
  ['PUT', '/workflows/fuzzed-put', bodyOf(workflowish)],
  ['PUT', '/workflows/fuzzed/schedule', bodyOf(fields.schedule)],
];

describe('the API under fuzzed bodies (fast-check, over HTTP to flowmend serve)', () => {
  it.each(routes)('%s %s: never a 5xx or a stack; every refusal is a 4xx with the error shape', async (method, path, body) => {
    await fc.assert(
      fc.asyncProperty(body, async (raw) => {
        const answer = await request<{ error?: { code: unknown; message: unknown; details: unknown } }>(api, method, path.replace('{id}', runId), { raw });
        expect(answer.status, raw).toBeLessThan(500);
        if (answer.status >= 400) {
          expect(answer.body.error, raw).toMatchObject({ code: expect.any(String), message: expect.any(String), details: expect.any(Object) });
          // A stack frame (`at fn (file:1:2)`), not the issue formatter's `at nodes` path.
          expect(String(answer.body.error?.message)).not.toMatch(/\bat .*:\d+:\d+|\.ts:\d+/);
        }
      }),
      { numRuns: 60 },
    );
  });
});
