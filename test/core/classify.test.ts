import { describe, expect, it } from 'vitest';
import { findBusinessError } from '../../functions/core/business-errors.ts';
import { type ClassifyInput, classifyOutcome } from '../../functions/core/classify.ts';
import { classifyHttpStatus } from '../../functions/core/http-status.ts';
import type { ClassificationRules } from '../../functions/core/ir.ts';
import { TRANSIENT_RETRY } from '../../functions/core/retry-policy.ts';
import { builtinCatalog } from '../../functions/nodes/catalog.ts';

/** As the engine calls it: with what the node's type declares. */
const classify = (input: ClassifyInput) => classifyOutcome({ ...input, capabilities: builtinCatalog.get(input.nodeType)?.capabilities ?? {} });

const body = (response: unknown, nodeType = 'http'): ClassifyInput => ({
  nodeId: 'call',
  nodeType,
  result: { kind: 'ok', outputs: { status_code: 200, headers: {}, response, extracted: {} }, action: 'default', durationMs: 1 },
});

const status = (code: number, rules?: ClassificationRules): ClassifyInput => ({
  nodeId: 'call',
  nodeType: 'http',
  result: {
    kind: 'failed',
    error: { code: 'HTTP_STATUS', message: `HTTP ${code}`, details: { status_code: code } },
    outputs: { status_code: code, headers: {}, response: '', extracted: {} },
    durationMs: 1,
  },
  ...(rules ? { rules } : {}),
});

type Kind = 'success' | 'warning' | 'error' | 'fatal';

const TABLE: [string, ClassifyInput, Kind, string?][] = [
  // business errors naming a resource, permission, auth, quota or rate limit: warnings
  ['Slack channel_not_found', body({ ok: false, error: 'channel_not_found' }), 'warning', 'API error: channel_not_found'],
  ['Slack user_not_found', body({ ok: false, error: 'user_not_found' }), 'warning', 'API error: user_not_found'],
  ['Slack invalid_auth', body({ ok: false, error: 'invalid_auth' }), 'warning', 'API error: invalid_auth'],
  ['Slack ratelimited', body({ ok: false, error: 'ratelimited' }), 'warning', 'API error: ratelimited'],
  ['success:false quota', body({ success: false, error: 'quota exceeded' }), 'warning', 'API error: quota exceeded'],
  ['success:false rate limit message', body({ success: false, message: 'Rate limit exceeded' }), 'warning', 'API error: Rate limit exceeded'],
  [
    'isError with error.message',
    body({ isError: true, error: { message: 'Permission denied for resource' } }),
    'warning',
    'API error: Permission denied for resource',
  ],
  [
    'MCP isError with text content',
    body({ isError: true, content: [{ type: 'text', text: 'Access denied to repo' }] }),
    'warning',
    'API error: Access denied to repo',
  ],
  ['GraphQL errors[] not found', body({ data: null, errors: [{ message: 'Repository not found' }] }), 'warning', 'API error: Repository not found'],
  ['GitHub bad credentials', body({ errors: [{ message: 'Bad credentials' }] }), 'warning', 'API error: Bad credentials'],
  ['code and message', body({ success: false, error_code: 'UNAUTHORIZED', error: 'Invalid token' }), 'warning', 'API error (UNAUTHORIZED): Invalid token'],
  ['errorCode FORBIDDEN', body({ success: false, errorCode: 'FORBIDDEN', message: 'nope' }), 'warning', 'API error (FORBIDDEN): nope'],
  ['status:"error" forbidden', body({ status: 'error', message: 'Forbidden' }), 'warning', 'API error: Forbidden'],
  ['status:"failed" does not exist', body({ status: 'failed', error: 'Workspace does not exist' }), 'warning', 'API error: Workspace does not exist'],
  [
    'nested error object with code',
    body({ error: { code: 'NOT_FOUND', message: 'Channel does not exist' } }),
    'warning',
    'API error (NOT_FOUND): Channel does not exist',
  ],
  ['numeric code 404', body({ success: false, code: 404, message: 'Item gone' }), 'warning', 'API error (404): Item gone'],
  ['envelope {successful, data}', body({ successful: true, data: { ok: false, error: 'channel_not_found' } }), 'warning', 'API error: channel_not_found'],
  // bad requests: repairable
  ['Slack invalid_parameter', body({ ok: false, error: 'invalid_parameter' }), 'error', 'API error: invalid_parameter'],
  ['Invalid input format', body({ success: false, error: 'Invalid input format' }), 'error', 'API error: Invalid input format'],
  [
    'VALIDATION_ERROR code',
    body({ success: false, error_code: 'VALIDATION_ERROR', error: 'name is bad' }),
    'error',
    'API error (VALIDATION_ERROR): name is bad',
  ],
  [
    'validation wins over "not found"',
    body({ errors: [{ message: 'Field "x" not found on type Query', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] }),
    'error',
  ],
  ['missing required wins over "missing"', body({ ok: false, error: 'missing required field: channel' }), 'error'],
  ['numeric code 400', body({ success: false, code: 400, message: 'oops' }), 'error'],
  ['must be a', body({ error: { type: 'invalid_request_error', message: 'max_tokens: must be a positive integer' } }), 'error'],
  ['unknown business error', body({ status: 'failed', message: 'something odd happened' }), 'error', 'API error: something odd happened'],
  ['bare truthy error', body({ error: 'boom' }), 'error', 'API error: boom'],
  ['ok:false without a message', body({ ok: false }), 'error', 'API error: API request failed'],
  // no false positives
  ['ok:true with error:null', body({ ok: true, error: null, channel: 'C1' }), 'success'],
  ['successful:true envelope', body({ successful: true, data: { id: 1 } }), 'success'],
  ['status:"ok"', body({ status: 'ok', message: 'not found anywhere' }), 'success'],
  ['empty errors[]', body({ data: { x: 1 }, errors: [] }), 'success'],
  ['error:false and empty error string', body({ error: false, error_message: '', items: [] }), 'success'],
  ['text body mentioning an error', body('error: not found'), 'success'],
  ['array body', body([{ error: 'x' }]), 'success'],
  ['a word "error" in data', body({ data: { title: 'Error handling 101', status: 'published' } }), 'success'],
  // only API node types are inspected
  ['shell stdout with an API-like body', body({ ok: false, error: 'channel_not_found' }, 'shell'), 'success'],
  [
    'llm text output',
    {
      nodeId: 'ask',
      nodeType: 'llm',
      result: { kind: 'ok', outputs: { response: '{"ok":false,"error":"user_not_found"}' }, action: 'default', durationMs: 1 },
    },
    'success',
  ],
  [
    'shell "No such file" is repairable, not an API warning',
    {
      nodeId: 'cat',
      nodeType: 'shell',
      result: {
        kind: 'failed',
        error: { code: 'EXIT_NONZERO', message: 'Command failed with exit code 1: cat: /x: No such file or directory' },
        durationMs: 1,
      },
    },
    'error',
  ],
  // HTTP statuses
  ['HTTP 401', status(401), 'warning'],
  ['HTTP 403', status(403), 'warning'],
  ['HTTP 404', status(404), 'warning'],
  ['HTTP 410', status(410), 'warning'],
  ['HTTP 429', status(429), 'warning'],
  ['HTTP 400', status(400), 'error'],
  ['HTTP 405', status(405), 'error'],
  ['HTTP 409', status(409), 'error'],
  ['HTTP 413', status(413), 'error'],
  ['HTTP 415', status(415), 'error'],
  ['HTTP 422', status(422), 'error'],
  ['HTTP 418 (other 4xx)', status(418), 'error'],
  // thrown errors, after the state machine's retries
  [
    'TransientError exhausted',
    { nodeId: 'call', nodeType: 'http', taskError: { Error: 'TransientError', Cause: 'HTTP 503 Service Unavailable' } },
    'fatal',
    'HTTP 503 Service Unavailable (retries exhausted)',
  ],
  [
    'ConfigurationError',
    { nodeId: 'ask', nodeType: 'llm', taskError: { Error: 'ConfigurationError', Cause: 'ANTHROPIC_API_KEY is not set' } },
    'fatal',
    'ConfigurationError: ANTHROPIC_API_KEY is not set',
  ],
];

describe('classifyOutcome', () => {
  it('has a table of at least 30 bodies and status codes', () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(30);
  });

  it.each(TABLE)('%s', (_name, input, kind, message) => {
    const outcome = classify(input);
    expect(outcome.kind).toBe(kind);
    if (message !== undefined && outcome.kind !== 'success') expect(outcome.error.message).toBe(message);
  });

  it('files warnings as non_repairable and unfixable, with the body in details', () => {
    const outcome = classify(body({ ok: false, error: 'channel_not_found' }));
    expect(outcome).toEqual({
      kind: 'warning',
      error: {
        node_id: 'call',
        category: 'non_repairable',
        code: 'API_ERROR',
        message: 'API error: channel_not_found',
        fixable: false,
        details: { status_code: 200, api_message: 'channel_not_found', response: '{"ok":false,"error":"channel_not_found"}' },
      },
    });
  });

  it('files repairable errors as execution_failure, template errors as template, exhausted retries as transient', () => {
    expect(classify(body({ ok: false, error: 'invalid_parameter' }))).toMatchObject({ kind: 'error', error: { category: 'execution_failure', fixable: true } });
    expect(classify(status(422))).toMatchObject({ kind: 'error', error: { category: 'execution_failure', code: 'HTTP_STATUS', fixable: true } });
    expect(classify(status(404))).toMatchObject({ kind: 'warning', error: { category: 'non_repairable', code: 'HTTP_STATUS', fixable: false } });
    const template = classify({
      nodeId: 'b',
      nodeType: 'shell',
      result: { kind: 'failed', error: { code: 'TEMPLATE_UNRESOLVED', message: '${a.x}' }, durationMs: 0 },
    });
    expect(template).toMatchObject({ kind: 'error', error: { category: 'template', fixable: true } });
    const exhausted = classify({ nodeId: 'call', nodeType: 'http', taskError: { Error: 'TransientError', Cause: 'timeout' } });
    expect(exhausted).toMatchObject({ kind: 'fatal', error: { category: 'transient', code: 'RETRIES_EXHAUSTED', fixable: false } });
  });

  it('files a command lost with its starting process as transient and fatal: no repair, a resume runs it again', () => {
    const lost = classifyOutcome({
      nodeId: 'sh',
      nodeType: 'shell',
      result: { kind: 'failed', error: { code: 'COMMAND_LOST', message: 'the command helper stopped (SIGKILL)' }, durationMs: 5 },
    });
    expect(lost).toMatchObject({ kind: 'fatal', error: { node_id: 'sh', category: 'transient', code: 'COMMAND_LOST', fixable: false } });
  });

  it('passes the runner action through on success', () => {
    expect(classify({ ...body({ ok: true }), result: { kind: 'ok', outputs: { response: {} }, action: 'found', durationMs: 0 } })).toEqual({
      kind: 'success',
      action: 'found',
    });
  });

  it('throws on an input with neither result nor error (a bug in the caller)', () => {
    expect(() => classify({ nodeId: 'x', nodeType: 'http' })).toThrow(/neither a result nor an error/);
  });
});

describe('workflow classification rules', () => {
  const withRules = (input: ClassifyInput, rules: ClassificationRules): ClassifyInput => ({ ...input, rules });

  it('adds warning patterns', () => {
    expect(classify(body({ ok: false, error: 'workspace_frozen' })).kind).toBe('error');
    expect(classify(withRules(body({ ok: false, error: 'workspace_frozen' }), { warning_patterns: ['Workspace_Frozen'] })).kind).toBe('warning');
  });

  it('adds repairable patterns that win over the default resource patterns', () => {
    const input = body({ ok: false, error: 'channel_not_found' });
    expect(classify(withRules(input, { repairable_patterns: ['channel_not_found'] })).kind).toBe('error');
  });

  it('overrides status codes', () => {
    expect(classify(status(404, { repairable_status_codes: [404] })).kind).toBe('error');
    expect(classify(status(400, { warning_status_codes: [400] })).kind).toBe('warning');
    expect(classifyHttpStatus(409, { transient_status_codes: [409] })).toBe('transient');
    expect(classifyHttpStatus(202, { warning_status_codes: [202] })).toBe('warning');
  });
});

describe('classifyHttpStatus defaults', () => {
  it.each([
    [200, 'success'],
    [201, 'success'],
    [204, 'success'],
    [301, 'repairable'],
    [401, 'warning'],
    [429, 'warning'],
    [400, 'repairable'],
    [451, 'repairable'],
    [408, 'transient'],
    [500, 'transient'],
    [502, 'transient'],
    [503, 'transient'],
    [529, 'transient'],
  ] as const)('HTTP %i is %s', (code, expected) => {
    expect(classifyHttpStatus(code)).toBe(expected);
  });
});

describe('findBusinessError', () => {
  it('prefers a GraphQL extension code and skips a zero code', () => {
    expect(findBusinessError({ errors: [{ message: 'No access', extensions: { code: 'FORBIDDEN' } }] })).toEqual({ message: 'No access', code: 'FORBIDDEN' });
    expect(findBusinessError({ ok: false, code: 0, error: 'x' })).toEqual({ message: 'x' });
  });
});

describe('TRANSIENT_RETRY', () => {
  it('retries TransientError with exponential backoff', () => {
    expect(TRANSIENT_RETRY).toEqual({ errors: ['TransientError'], intervalSeconds: 1, maxAttempts: 3, backoffRate: 2 });
  });
});
