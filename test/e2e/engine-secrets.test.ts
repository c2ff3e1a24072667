import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeMcpTools } from '../../functions/adapters/mcp-tools.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { parseWorkflow } from '../../functions/core/validate.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { makeMcpRunner } from '../../functions/nodes/mcp.ts';
import { makeTempDir, REPO, writeWorkflow } from '../support/cli-process.ts';

/** Workflow code cannot reach the engine's own credentials (issue 27). */

const dir = makeTempDir('engine-secrets');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CANARIES = { ANTHROPIC_API_KEY: 'sk-canary-anthropic-4f1d', AWS_SECRET_ACCESS_KEY: 'canary-aws-secret-9e27', FLOWMEND_SECRET_TOKEN: 'canary-input-77a0' };

describe("the engine's environment, seen from a shell command", () => {
  it('holds none of its credentials in /proc/$PPID/environ, even base64-encoded past redaction', () => {
    const path = writeWorkflow(dir, 'peek', {
      nodes: [{ id: 'peek', type: 'shell', params: { command: 'cat /proc/$PPID/environ | base64 -w0; echo; env | base64 -w0' } }],
      outputs: { seen: { source: '${peek.stdout}' } },
    });
    const result = spawnSync(process.execPath, [join(REPO, 'bin', 'flowmend.cjs'), 'run', path, '--state-dir', join(dir, 'state'), '--output-format', 'json'], {
      cwd: REPO,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: dir, ...CANARIES },
    });
    const report = JSON.parse(result.stdout) as { status: string; result: { seen: string } };
    expect(report.status).toBe('succeeded');
    const [parent, own] = report.result.seen.split('\n').map((b) => Buffer.from(b, 'base64').toString('utf8'));
    expect(parent).toContain('ANTHROPIC_API_KEY=');
    for (const value of Object.values(CANARIES)) {
      expect(parent).not.toContain(value);
      expect(own).not.toContain(value);
    }
  });
});

describe("the engine's environment, seen from a code node's Python", () => {
  it('holds none of its credentials in /proc/<ppid>/environ (the code node runs first: the shell runner never scrubbed)', () => {
    const path = writeWorkflow(dir, 'peek-python', {
      nodes: [{ id: 'peek', type: 'code', params: { code: 'import os\nresult = open(f"/proc/{os.getppid()}/environ", "rb").read().decode("latin-1")' } }],
      outputs: { seen: { source: '${peek.result}' } },
    });
    const result = spawnSync(process.execPath, [join(REPO, 'bin', 'flowmend.cjs'), 'run', path, '--state-dir', join(dir, 'state'), '--output-format', 'json'], {
      cwd: REPO,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: dir, ...CANARIES },
    });
    const report = JSON.parse(result.stdout) as { status: string; result: { seen: string } };
    expect(report.status).toBe('succeeded');
    expect(report.result.seen).toContain('ANTHROPIC_API_KEY=');
    for (const value of Object.values(CANARIES)) expect(report.result.seen).not.toContain(value);
  });
});

describe("an MCP server's env and headers", () => {
  it("refuse the engine's own variables", async () => {
    const parsed = parseWorkflow({
      mcp_servers: { chat: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer ${ANTHROPIC_API_KEY}' } } },
      nodes: [{ id: 'post', type: 'mcp', params: { server: 'chat', tool: 'x', arguments: {} } }],
    });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const host = new LocalHost({ store: new MemoryRunStore(), runners: [makeMcpRunner({ tools: makeMcpTools({ env: CANARIES, allowStdio: true }) })] });
    const report = await host.start({ workflow: parsed.workflow, workflowName: 'mcp', params: {}, repairEnabled: false, maxRepairs: 0 });
    expect(report.status).toBe('failed');
    expect(JSON.stringify(report.errors)).toContain("the engine's own variables (AWS_*, ANTHROPIC_*, FLOWMEND_*) are never given to a workflow's MCP server");
    expect(JSON.stringify(report)).not.toContain(CANARIES.ANTHROPIC_API_KEY);
  });
});
