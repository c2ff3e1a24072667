import { describe, expect, it } from 'vitest';
import { codeRunner, makeCodeRunner } from '../../functions/nodes/code.ts';
import { CodeParamsSchema } from '../../functions/nodes/code-spec.ts';

// pflow's code node: real python3 processes (issue 29).
const context = { runId: 'run_code_1', nodeId: 'py', seq: 1, cacheKey: 'k' };
const run = (params: Record<string, unknown>) => codeRunner.run(CodeParamsSchema.parse(params), context);

describe('the code node (python3, a process per visit)', () => {
  it('binds inputs as variables, returns result, and captures prints', async () => {
    const out = await run({
      code: 'items: list\nprint("seen", len(items))\nresult: dict = {"total": sum(items), "n": len(items)}',
      inputs: { items: [1, 2, 3] },
    });
    expect(out).toMatchObject({ kind: 'ok', action: 'default', outputs: { result: { total: 6, n: 3 }, stdout: 'seen 3\n', stderr: '' } });
  });

  it('parses JSON text for an input annotated dict or list (pflow: upstream JSON is parsed), and checks outer types', async () => {
    expect(await run({ code: 'data: dict\nresult = data["a"]', inputs: { data: '{"a": 5}' } })).toMatchObject({ kind: 'ok', outputs: { result: 5 } });
    expect(await run({ code: 'n: int\nresult = n', inputs: { n: 'seven' } })).toMatchObject({
      kind: 'failed',
      error: { code: 'PYTHON_ERROR', message: "TypeError: input 'n' is declared int but is str" },
    });
  });

  it("routes on `next` when the code sets it (pflow's dynamic routing)", async () => {
    expect(await run({ code: 'x: int\nnext: str = "big" if x > 5 else "small"\nresult: int = x', inputs: { x: 9 } })).toMatchObject({
      kind: 'ok',
      action: 'big',
      outputs: { result: 9 },
    });
  });

  it('reports an exception with its traceback, and a syntax error with its line', async () => {
    const raised = await run({ code: 'print("before")\nraise ValueError("bad value")' });
    expect(raised).toMatchObject({ kind: 'failed', error: { code: 'PYTHON_ERROR', message: 'ValueError: bad value' }, outputs: { stdout: 'before\n' } });
    expect(JSON.stringify(raised)).toContain('Traceback');
    expect(await run({ code: 'def f(:\n  pass' })).toMatchObject({ kind: 'failed', error: { message: expect.stringMatching(/^SyntaxError: line 1/) } });
  });

  it("gets none of the engine's credentials in its environment", async () => {
    process.env.ANTHROPIC_API_KEY = 'canary-anthropic';
    process.env.AWS_SECRET_ACCESS_KEY = 'canary-aws';
    try {
      const out = await run({ code: 'import os\nresult = sorted(k for k in os.environ if k.startswith(("AWS_", "ANTHROPIC_", "FLOWMEND_")))' });
      expect(out).toMatchObject({ kind: 'ok', outputs: { result: [] } });
    } finally {
      delete process.env.ANTHROPIC_API_KEY;
      delete process.env.AWS_SECRET_ACCESS_KEY;
    }
  });

  it('is killed at its timeout, and refused past the output cap', async () => {
    expect(await run({ code: 'import time\ntime.sleep(30)', timeout: 0.5 })).toMatchObject({ kind: 'failed', error: { code: 'TIMEOUT' } });
    const small = makeCodeRunner({ maxAnswerBytes: 1000 });
    expect(await small.run(CodeParamsSchema.parse({ code: 'result = "x" * 5000' }), context)).toMatchObject({
      kind: 'failed',
      error: { code: 'OUTPUT_TOO_LARGE' },
    });
  });

  it('says so when python3 is not there', async () => {
    const missing = makeCodeRunner({ python: '/nonexistent/python3' });
    expect(await missing.run(CodeParamsSchema.parse({ code: 'result = 1' }), context)).toMatchObject({
      kind: 'failed',
      error: { code: 'SPAWN_FAILED', message: expect.stringContaining('needs Python 3') },
    });
  });
});
