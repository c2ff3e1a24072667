import { describe, expect, it } from 'vitest';
import { plainTextSecrets, splitMcpAlias } from '../../functions/core/mcp-servers.ts';
import { normalisePflowForms } from '../../functions/core/pflow-forms.ts';
import { parseWorkflow, validateWorkflow } from '../../functions/core/validate.ts';
import { builtinCatalog } from '../../functions/nodes/catalog.ts';

describe('splitMcpAlias', () => {
  it('takes the longest configured server name, so servers and tools may both hold hyphens', () => {
    expect(splitMcpAlias('mcp-my-server-get-file', ['my', 'my-server'])).toEqual({ server: 'my-server', tool: 'get-file' });
    expect(splitMcpAlias('mcp-slack-send_message', [])).toEqual({ server: 'slack', tool: 'send_message' });
    expect(splitMcpAlias('mcp-slack', [])).toBeUndefined();
    expect(splitMcpAlias('shell', [])).toBeUndefined();
  });
});

describe('normalisePflowForms', () => {
  it("copies only the servers a workflow calls from the config file, and the workflow's own win", () => {
    const out = normalisePflowForms(
      { nodes: [{ id: 'a', type: 'mcp-gh-list', params: { repo: 'x' } }], mcp_servers: { gh: { command: 'mine' } } },
      { mcpServers: { gh: { command: 'theirs' }, other: { command: 'unused' } } },
    ) as { mcp_servers: Record<string, unknown>; nodes: unknown[] };
    expect(out.mcp_servers).toEqual({ gh: { command: 'mine' } });
    expect(out.nodes[0]).toEqual({ id: 'a', type: 'mcp', params: { server: 'gh', tool: 'list', arguments: { repo: 'x' } } });
  });

  it("reads pflow's shared store as templates: a write-file with no content writes the nearest read-file's upstream", () => {
    const nodes = (ids: [string, string][], edges: [string, string][], writer: Record<string, unknown> = {}) =>
      (
        normalisePflowForms({
          nodes: ids.map(([id, type]) => ({ id, type, params: type === 'write-file' ? { file_path: 'out.txt', ...writer } : {} })),
          edges: edges.map(([from, to]) => ({ from, to })),
        }) as { nodes: { id: string; params: Record<string, unknown> }[] }
      ).nodes.find((n) => n.id === 'writer')?.params.content;
    // pflow's simple-pipeline: reader -> copier -> writer.
    const pipeline: [string, string][] = [
      ['reader', 'read-file'],
      ['copier', 'copy-file'],
      ['writer', 'write-file'],
    ];
    expect(
      nodes(pipeline, [
        ['reader', 'copier'],
        ['copier', 'writer'],
      ]),
    ).toBe('${reader.content}');
    // Two readers on two branches: whichever ran (and did not fail) wins, the nearer first.
    const branches: [string, string][] = [
      ['first', 'read-file'],
      ['second', 'read-file'],
      ['mid', 'shell'],
      ['writer', 'write-file'],
    ];
    expect(
      nodes(branches, [
        ['first', 'second'],
        ['first', 'mid'],
        ['second', 'writer'],
        ['mid', 'writer'],
      ]),
    ).toBe('${second.content ?? first.content}');
    // Given content, or no reader upstream: left as written (validation names the missing param).
    expect(
      nodes(
        pipeline,
        [
          ['reader', 'copier'],
          ['copier', 'writer'],
        ],
        { content: 'mine' },
      ),
    ).toBe('mine');
    expect(nodes(pipeline, [['writer', 'reader']])).toBeUndefined();
  });
});

describe('validation of pflow forms', () => {
  it('refuses a literal token in an MCP server header and accepts a ${VAR} reference', () => {
    expect(plainTextSecrets({ type: 'http', url: 'https://x', headers: { Authorization: 'Bearer abc123', Accept: 'json' } })).toEqual([
      'headers.Authorization',
    ]);
    expect(plainTextSecrets({ type: 'http', url: 'https://x', headers: { Authorization: 'Bearer ${TOKEN}' } })).toEqual([]);
  });

  it.each([
    ['git-commit', 'shell'],
    ['github-create-pr', 'GitHub REST API'],
    ['claude-code', 'llm node'],
  ])("says what to use instead of pflow's %s", (type, instead) => {
    const parsed = parseWorkflow({ nodes: [{ id: 'n', type }] });
    if (!parsed.ok) throw new Error('parse');
    expect(validateWorkflow(parsed.workflow, builtinCatalog)).toContainEqual(
      expect.objectContaining({ code: 'UNSUPPORTED_NODE_TYPE', message: expect.stringContaining(instead) }),
    );
  });

  it("accepts pflow's code node on every host, AWS included (a Python runner Lambda there)", () => {
    const parsed = parseWorkflow({ nodes: [{ id: 'n', type: 'code', params: { code: 'result = 1' } }] });
    if (!parsed.ok) throw new Error('parse');
    expect(validateWorkflow(parsed.workflow, builtinCatalog).filter((i) => i.severity === 'error')).toEqual([]);
  });
});
