import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeAnthropicLlmClient } from '../../../functions/adapters/anthropic-llm-client.ts';
import { makeMcpTools } from '../../../functions/adapters/mcp-tools.ts';
import { InvalidInputError, TransientError } from '../../../functions/core/errors.ts';
import type { NodeRunner, RunContext } from '../../../functions/core/node-type.ts';
import * as z from '../../../functions/core/zod.ts';
import { makeRunNodeHandler } from '../../../functions/hosts/lambda/run-node.ts';
import { handler as runShell } from '../../../functions/hosts/lambda/run-shell.ts';
import { handler as runTransform } from '../../../functions/hosts/lambda/run-transform.ts';
import { builtinCatalog, makeBuiltinRunners } from '../../../functions/nodes/catalog.ts';
import { builtinSpecCatalog } from '../../../functions/nodes/specs.ts';
import { engineNodeSpecs } from '../../../functions/nodes/workflow.ts';

const runEvent = (type: string, params: Record<string, unknown>) => ({
  kind: 'run',
  runId: 'run-abc',
  owner: 'exec-1',
  seq: 3,
  node: { id: 'n1', type, params, cacheKey: 'ck-1', timeoutS: 30 },
});

const probeRunner = (run: NodeRunner['run']): NodeRunner => ({
  type: 'probe',
  paramsSchema: z.strictObject({ size: z._default(z.int(), 1), label: z.optional(z.string()) }),
  outputKeys: ['seen'],
  sideEffects: () => false,
  timeoutS: () => 1,
  run,
});

describe('makeRunNodeHandler', () => {
  it('runs a shell node from a RunNode event', async () => {
    const result = await runShell(runEvent('shell', { command: 'echo "$X"', env: { X: 'from-env' } }));
    expect(result).toMatchObject({ kind: 'ok', action: 'default', outputs: { stdout: 'from-env', exit_code: 0 } });
  });

  it('runs a transform node from a RunNode event', async () => {
    const result = await runTransform(runEvent('transform', { expression: '$sum(xs)', input: { xs: [1, 2, 3] } }));
    expect(result).toMatchObject({ kind: 'ok', outputs: { result: 6 } });
  });

  it('passes parsed params (with defaults) and the visit identity to the runner', async () => {
    let seen: { params: Record<string, unknown>; context: RunContext } | undefined;
    const handler = makeRunNodeHandler(
      probeRunner(async (params, context) => {
        seen = { params, context };
        return { kind: 'ok', outputs: { seen: true }, action: 'default', durationMs: 0 };
      }),
    );
    await handler(runEvent('probe', { label: 'x' }));
    expect(seen).toEqual({ params: { size: 1, label: 'x' }, context: { runId: 'run-abc', nodeId: 'n1', seq: 3, cacheKey: 'ck-1' } });
    // A batch item's event (the RunBatch Map's iteration) carries its item: the runner is told which one.
    await handler({ ...runEvent('probe', {}), item: { batchSeq: 2, index: 4 } });
    expect(seen?.context).toEqual({ runId: 'run-abc', nodeId: 'n1', seq: 3, cacheKey: 'ck-1', item: 4 });
  });

  it("asks the host for the call's signal when the runner reads it, not before, and reads it as it is then", async () => {
    const controller = new AbortController();
    let asked = 0;
    const signal = () => {
      asked += 1;
      return controller.signal;
    };
    const ok = { kind: 'ok', outputs: { seen: true }, action: 'default', durationMs: 0 } as const;
    // A runner that never reads it (a transform's): the host makes no AbortSignal for the call (CancelWatch).
    await makeRunNodeHandler(
      probeRunner(async () => ok),
      { signal },
    )(runEvent('probe', {}));
    expect(asked).toBe(0);
    let aborted: boolean | undefined;
    await makeRunNodeHandler(
      probeRunner(async (_params, context) => {
        controller.abort();
        aborted = context.signal?.aborted;
        return ok;
      }),
      { signal },
    )(runEvent('probe', {}));
    expect(asked).toBe(1);
    expect(aborted).toBe(true);
  });

  it('returns PARAMS_INVALID naming each bad param and the valid ones, without running', async () => {
    const result = await runShell(runEvent('shell', { comand: 'ls', timeout_s: 'soon' }));
    expect(result.kind).toBe('failed');
    if (result.kind !== 'failed') return;
    expect(result.error.code).toBe('PARAMS_INVALID');
    expect(result.error.message).toContain('Invalid params for shell node');
    expect(result.error.message).toContain('param "command": command is required');
    expect(result.error.message).toContain('param "timeout_s": timeout_s must be a number of seconds');
    expect(result.error.message).toContain('unknown param "comand" (did you mean "command"?); valid params: command, stdin, env, cwd, timeout_s');
  });

  it('does not run the command when a param is invalid', async () => {
    const marker = join(tmpdir(), `flowmend-not-run-${process.pid}`);
    const result = await runShell(runEvent('shell', { command: `touch ${marker}`, ignore_errors: 'yes' }));
    expect(result).toMatchObject({ kind: 'failed', error: { code: 'PARAMS_INVALID' } });
    expect(existsSync(marker)).toBe(false);
  });

  it('names nested param paths', async () => {
    const result = await runShell(runEvent('shell', { command: 'ls', env: { GOOD: 'x', BAD: [1] } }));
    expect(result).toMatchObject({ kind: 'failed', error: { code: 'PARAMS_INVALID' } });
    if (result.kind === 'failed') expect(result.error.message).toContain('param "env.BAD": env values must be');
  });

  it('throws InvalidInputError naming the bad event field', async () => {
    const event = runEvent('shell', { command: 'ls' });
    const { id: _id, ...nodeWithoutId } = event.node;
    await expect(runShell({ ...event, node: nodeWithoutId })).rejects.toThrow(InvalidInputError);
    await expect(runShell({ ...event, node: nodeWithoutId })).rejects.toThrow(/event\.node\.id/);
    await expect(runShell({ ...event, kind: 'done' })).rejects.toThrow(/event\.kind/);
    await expect(runShell({ ...event, seq: 0, node: nodeWithoutId })).rejects.toThrow(/event\.seq: .*; event\.node\.id: /);
    await expect(runShell('not an event')).rejects.toThrow(InvalidInputError);
  });

  it('throws InvalidInputError when the node type does not match the handler', async () => {
    await expect(runShell(runEvent('transform', { expression: '$' }))).rejects.toThrow(/type "transform", this handler runs "shell"/);
  });

  it('lets TransientError and bugs propagate', async () => {
    const transient = makeRunNodeHandler(probeRunner(async () => Promise.reject(new TransientError('503 from upstream'))));
    await expect(transient(runEvent('probe', {}))).rejects.toThrow(TransientError);
    const buggy = makeRunNodeHandler(probeRunner(async () => Promise.reject(new TypeError('x is undefined'))));
    await expect(buggy(runEvent('probe', {}))).rejects.toThrow(TypeError);
  });
});

describe('builtinSpecCatalog (the Advance and StartRun Lambdas)', () => {
  it('knows every node type a builtin runner runs, so AWS validates and advances each of them', () => {
    const ports = { llm: { config: () => ({}), client: makeAnthropicLlmClient() }, mcp: { tools: makeMcpTools({ env: {}, allowStdio: false }) } };
    // Plus the types the engine runs itself, without a runner (the workflow node).
    const engineTypes = engineNodeSpecs.map((s) => s.type);
    expect([...builtinSpecCatalog.keys()].sort()).toEqual([...makeBuiltinRunners(ports).map((r) => r.type), ...engineTypes].sort());
  });
});

describe('builtinCatalog', () => {
  it('holds shell and transform by type name', () => {
    expect(builtinCatalog.get('shell')?.outputKeys).toEqual(['stdout', 'stderr', 'exit_code']);
    expect(builtinCatalog.get('transform')?.outputKeys).toEqual(['result']);
    expect([...builtinCatalog.keys()]).toEqual(expect.arrayContaining(['shell', 'transform']));
  });
});
