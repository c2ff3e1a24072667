import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The JSON body as sent (model, max_tokens, messages, system, ...). */
  body: Record<string, unknown>;
}

export interface FakeUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

/** A message whose content is `text`, or an error answer with `status` (and an Anthropic error body). */
export type FakeReply = { text: string; usage?: FakeUsage; model?: string; stopReason?: string } | { status: number; body?: unknown };

export interface FakeAnthropic {
  /** Pass as `baseURL` (or ANTHROPIC_BASE_URL). */
  readonly baseURL: string;
  /** Every request to /v1/messages, in order. */
  readonly calls: RecordedRequest[];
  /** Queues a reply; each request takes the next one. With the queue empty the fake answers 400. */
  enqueue(reply: FakeReply): void;
  /** Replies still queued. */
  pending(): number;
  close(): Promise<void>;
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

const message = (text: string, model: string, usage: FakeUsage | undefined, stopReason: string) => ({
  id: `msg_fake_${Math.random().toString(36).slice(2, 10)}`,
  type: 'message',
  role: 'assistant',
  model,
  content: [{ type: 'text', text, citations: null }],
  stop_reason: stopReason,
  stop_sequence: null,
  stop_details: null,
  container: null,
  diagnostics: null,
  usage: {
    input_tokens: usage?.input_tokens ?? 12,
    output_tokens: usage?.output_tokens ?? 5,
    cache_creation_input_tokens: usage?.cache_creation_input_tokens ?? null,
    cache_read_input_tokens: usage?.cache_read_input_tokens ?? null,
    cache_creation: null,
    server_tool_use: null,
    service_tier: 'standard',
    inference_geo: null,
    output_tokens_details: null,
    speed: null,
  },
});

const sendJson = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_fake', 'retry-after': '0' });
  res.end(JSON.stringify(body));
};

/** Streams a message as the SDK's `messages.stream()` expects (server-sent events). */
const sendStream = (res: ServerResponse, full: ReturnType<typeof message>): void => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const event = (type: string, data: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const text = full.content[0]?.text ?? '';
  event('message_start', { message: { ...full, content: [], stop_reason: null, usage: { ...full.usage, output_tokens: 0 } } });
  event('content_block_start', { index: 0, content_block: { type: 'text', text: '', citations: null } });
  event('content_block_delta', { index: 0, delta: { type: 'text_delta', text } });
  event('content_block_stop', { index: 0 });
  event('message_delta', {
    delta: { stop_reason: full.stop_reason, stop_sequence: null, stop_details: null, container: null },
    usage: { output_tokens: full.usage.output_tokens },
  });
  event('message_stop', {});
  res.end();
};

/** A fake Anthropic Messages API on 127.0.0.1 that answers from a queue of scripted replies. */
export const startFakeAnthropic = async (): Promise<FakeAnthropic> => {
  const calls: RecordedRequest[] = [];
  const queue: FakeReply[] = [];

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      if (req.method !== 'POST' || !path.startsWith('/v1/messages')) {
        sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: `fake-anthropic: no route ${req.method} ${path}` } });
        return;
      }
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        // recorded as {}: the test will see it
      }
      calls.push({ method: req.method, path, headers: req.headers, body });
      const reply = queue.shift();
      if (reply === undefined) {
        sendJson(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'fake-anthropic: no reply enqueued' } });
        return;
      }
      if ('status' in reply) {
        const type = ERROR_TYPES[reply.status] ?? (reply.status >= 500 ? 'api_error' : 'invalid_request_error');
        sendJson(res, reply.status, reply.body ?? { type: 'error', error: { type, message: `fake-anthropic: scripted ${reply.status}` } });
        return;
      }
      const model = reply.model ?? (typeof body.model === 'string' ? body.model : 'claude-haiku-4-5');
      const full = message(reply.text, model, reply.usage, reply.stopReason ?? 'end_turn');
      if (body.stream === true) sendStream(res, full);
      else sendJson(res, 200, full);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}`,
    calls,
    enqueue: (reply) => {
      queue.push(reply);
    },
    pending: () => queue.length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
