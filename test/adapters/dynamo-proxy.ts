import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}
export interface ProxyAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}
/**
 * What the proxy does with one request: `forward` sends it on to the peer (and may be called more than
 * once); `'reset'` drops the connection without an answer.
 */
export type ProxyHandler = (received: ReceivedRequest, forward: () => Promise<ProxyAnswer>) => Promise<ProxyAnswer | 'reset'>;

/**
 * A DynamoDB-protocol proxy on 127.0.0.1 in front of a real peer (dynalite): tests see exactly what
 * arrived on the wire, and can answer in its place (a throttle, an error) or repeat a request.
 */
export async function startDynamoProxy(
  target: string,
  handle: ProxyHandler,
): Promise<{ endpoint: string; received: ReceivedRequest[]; close(): Promise<void> }> {
  const peer = new URL(target);
  const received: ReceivedRequest[] = [];
  const forwardOf = (incoming: ReceivedRequest) => (): Promise<ProxyAnswer> =>
    new Promise((resolve, reject) => {
      const { host: _host, connection: _connection, ...headers } = incoming.headers;
      const out = request({ hostname: peer.hostname, port: peer.port, path: incoming.path, method: incoming.method, headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const type = response.headers['content-type'];
          resolve({
            status: response.statusCode ?? 0,
            headers: typeof type === 'string' ? { 'content-type': type } : {},
            body: Buffer.concat(chunks).toString('utf8'),
          });
        });
      });
      out.on('error', reject);
      out.end(incoming.body);
    });
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const incoming: ReceivedRequest = { method: req.method ?? '', path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(incoming);
      handle(incoming, forwardOf(incoming)).then(
        (answer) => (answer === 'reset' ? req.socket.destroy() : res.writeHead(answer.status, answer.headers).end(answer.body)),
        (error: unknown) => res.writeHead(502).end(String(error)),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** DynamoDB's error answer, as its JSON protocol shapes it. */
export const dynamoErrorAnswer = (status: number, type: string, message: string, extra: Record<string, unknown> = {}): ProxyAnswer => ({
  status,
  headers: { 'content-type': 'application/x-amz-json-1.0' },
  body: JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message, ...extra }),
});
