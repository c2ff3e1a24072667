import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { makeTestMcpServer } from './mcp-tools.ts';

export interface McpHttpTestServer {
  url: string;
  /** Authorization headers the server saw, in order. */
  authorizations: (string | undefined)[];
  close(): Promise<void>;
}

/** A stateless Streamable HTTP MCP server on 127.0.0.1: one SDK server and transport per request. */
export const startMcpHttpServer = async (callsFile: string): Promise<McpHttpTestServer> => {
  const authorizations: (string | undefined)[] = [];
  const http: Server = createServer(async (req, res) => {
    authorizations.push(req.headers.authorization);
    const server = makeTestMcpServer(callsFile);
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    authorizations,
    close: () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
};
