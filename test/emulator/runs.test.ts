import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpTestServer, startHttpTestServer } from '../support/http-test-server.ts';
import { type McpHttpTestServer, startMcpHttpServer } from '../support/mcp-http-server.ts';
import { callsNotAllowed, type DeployedStack, explain, scenarioDir, useDeployedStack } from './support/stack.ts';

const ROOT = join(import.meta.dirname, '..', '..');
let stack: DeployedStack;
let mark = 0;
let http: HttpTestServer;
let mcp: McpHttpTestServer;
const dir = scenarioDir('runs');

beforeAll(async () => {
  stack = await useDeployedStack();
  mark = stack.mark();
  http = await startHttpTestServer();
  mcp = await startMcpHttpServer(join(dir, 'mcp-calls.jsonl'));
});

afterAll(async () => {
  await http?.close();
  await mcp?.close();
});

describe('runs on the stack deployed to the AWS emulator (REST API, Step Functions, Lambda on Node 24)', () => {
  it('runs examples/hello.json started through the REST API to success', async () => {
    const workflow = JSON.parse(readFileSync(join(ROOT, 'examples', 'hello.json'), 'utf8')) as unknown;
    const report = await stack.waitFor(await stack.start({ workflow }));
    expect(report, explain(report)).toMatchObject({ status: 'succeeded', result: { loud: 'HELLO WORLD' } });
  });

  it('runs shell, http and transform nodes, the shell node on the runtime the stack deploys to (Node 24)', async () => {
    http.route('/items', {
      body: {
        items: [
          { name: 'a', price: 2 },
          { name: 'b', price: 3 },
        ],
      },
    });
    const workflow = {
      ir_version: '0.1.0',
      nodes: [
        { id: 'runtime', type: 'shell', params: { command: 'node -p process.version' } },
        { id: 'fetch', type: 'http', params: { url: `${http.url}/items`, extract: { items: '$.items' } } },
        { id: 'total', type: 'transform', params: { expression: '$sum(items.price)', input: '${fetch.extracted}' } },
      ],
      edges: [
        { from: 'runtime', to: 'fetch' },
        { from: 'fetch', to: 'total' },
      ],
      outputs: { node: { source: '${runtime.stdout}' }, total: { source: '${total.result}' } },
    };
    const report = await stack.waitFor(await stack.start({ workflow }));
    expect(report, explain(report)).toMatchObject({ status: 'succeeded', result: { node: 'v24.21.0', total: 5 } });
  });

  it('calls a tool of a Streamable HTTP MCP server from the MCP runner', async () => {
    const workflow = {
      ir_version: '0.1.0',
      mcp_servers: { chat: { type: 'http', url: mcp.url } },
      nodes: [{ id: 'post', type: 'mcp', params: { server: 'chat', tool: 'post_message', arguments: { channel: 'general', text: 'from the emulator' } } }],
      outputs: { ts: { source: '${post.result.ts}' } },
    };
    const report = await stack.waitFor(await stack.start({ workflow }));
    expect(report.status, explain(report)).toBe('succeeded');
    expect(await readFile(join(dir, 'mcp-calls.jsonl'), 'utf8')).toContain('general:from the emulator');
  });

  it('runs a batch, each item on the runner, in parallel chunks', async () => {
    const workflow = {
      ir_version: '0.1.0',
      nodes: [
        {
          id: 'each',
          type: 'shell',
          params: { command: 'expr ${item} \\* ${item}' },
          batch: { items: [1, 2, 3, 4, 5], parallel: true, max_concurrent: 3 },
        },
        { id: 'sum', type: 'transform', params: { expression: '$sum(results.stdout.$number($))', input: '${each}' } },
      ],
      edges: [{ from: 'each', to: 'sum' }],
      outputs: { sum: { source: '${sum.result}' } },
    };
    const report = await stack.waitFor(await stack.start({ workflow }));
    expect(report, explain(report)).toMatchObject({ status: 'succeeded', result: { sum: 55 } });
  });

  it('runs a nested workflow as a child run', async () => {
    const inner = {
      ir_version: '0.1.0',
      inputs: { word: { type: 'string', required: true } },
      nodes: [{ id: 'up', type: 'shell', params: { stdin: '${word}', command: 'tr a-z A-Z' } }],
      outputs: { loud: { source: '${up.stdout}' } },
    };
    const workflow = {
      ir_version: '0.1.0',
      nodes: [
        { id: 'sub', type: 'workflow', params: { workflow_ir: inner, param_mapping: { word: 'nested' }, output_mapping: { loud: 'shout' } } },
        { id: 'after', type: 'shell', params: { command: 'echo "got ${sub.shout}"' } },
      ],
      edges: [{ from: 'sub', to: 'after' }],
      outputs: { said: { source: '${after.stdout}' } },
    };
    const report = await stack.waitFor(await stack.start({ workflow }));
    expect(report, explain(report)).toMatchObject({ status: 'succeeded', result: { said: 'got NESTED' } });
  });

  it("makes only AWS calls its Lambdas' roles allow (the template's policies, evaluated by an IAM policy evaluator)", async () => {
    expect(await callsNotAllowed(stack, mark)).toEqual([]);
  });
});
