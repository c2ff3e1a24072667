import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type WorkflowInput, WorkflowSchema } from '../../functions/core/ir.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import type { RunReport } from '../../functions/core/run-report.ts';
import { runCli as runCliInProcess } from '../../functions/hosts/cli/commands.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { countLines, makeTempDir, writeWorkflow } from '../support/cli-process.ts';

const dir = makeTempDir('spine');
const stateDir = join(dir, 'state');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (workflow: WorkflowInput, params: Record<string, unknown> = {}): Promise<RunReport> =>
  new LocalHost({ store: new MemoryRunStore() }).start({
    workflow: WorkflowSchema.parse(workflow),
    workflowName: 'spine',
    params,
    repairEnabled: false,
    maxRepairs: 0,
  });

const executed = (report: RunReport) => report.steps.map((s) => `${s.node_id}#${s.visit}:${s.status}`);

/** The CLI's own code in this process: argv in, exit code and printed text out. */
const cli = async (argv: string[]) => {
  let stdout = '';
  let stderr = '';
  const code = await runCliInProcess([...argv, '--state-dir', stateDir], {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    env: {},
  });
  return { code, stdout, stderr };
};

describe('chains', () => {
  it('runs a chain in order, passing each output on, and ends with the declared outputs', async () => {
    const report = await run(
      {
        nodes: [
          { id: 'greet', type: 'shell', params: { command: 'echo hello ${name}' } },
          { id: 'shout', type: 'shell', params: { stdin: '${greet.stdout}', command: 'tr a-z A-Z' } },
          { id: 'count', type: 'transform', params: { expression: '$length($trim($))', input: '${shout.stdout}' } },
        ],
        edges: [
          { from: 'greet', to: 'shout' },
          { from: 'shout', to: 'count' },
        ],
        inputs: { name: { type: 'string' } },
        outputs: { loud: { source: '${shout.stdout}' }, length: { source: '${count.result}' } },
      },
      { name: 'Ada' },
    );
    expect(report).toMatchObject({ success: true, status: 'succeeded', errors: [], result: { loud: 'HELLO ADA', length: 9 } });
    expect(executed(report)).toEqual(['greet#1:completed', 'shout#1:completed', 'count#1:completed']);
    expect(report.metrics).toMatchObject({ nodes_executed: 3, nodes_cached: 0 });
  });

  it('without declared outputs, the result is the last node’s outputs', async () => {
    const report = await run({ nodes: [{ id: 'only', type: 'shell', params: { command: 'printf done' } }] });
    expect(report.result).toEqual({ stdout: 'done', stderr: '', exit_code: 0 });
  });

  it('fails on a non-zero exit without an error edge and does not run what follows', async () => {
    const report = await run({
      nodes: [
        { id: 'boom', type: 'shell', params: { command: 'echo oops >&2; exit 3' } },
        { id: 'after', type: 'shell', params: { command: `touch ${dir}/after-boom` } },
      ],
      edges: [{ from: 'boom', to: 'after' }],
    });
    expect(report.status).toBe('failed');
    expect(report.errors).toEqual([expect.objectContaining({ node_id: 'boom', fixable: true, message: expect.stringContaining('exit code 3') })]);
    expect(executed(report)).toEqual(['boom#1:failed']);
    expect(existsSync(join(dir, 'after-boom'))).toBe(false);
  });
});

describe('resume of a failed run', () => {
  it('runs the failed node again and replays the nodes before it', async () => {
    const host = new LocalHost({ store: new MemoryRunStore() });
    const fixed = join(dir, 'fixed');
    const first = await host.start({
      workflow: WorkflowSchema.parse({
        nodes: [
          { id: 'prep', type: 'shell', params: { command: `echo x >> ${dir}/prep.count; echo prepared` } },
          { id: 'needs', type: 'shell', params: { command: `test -f ${fixed} || exit 5; echo x >> ${dir}/needs.count; echo \${prep.stdout} and fixed` } },
        ],
        edges: [{ from: 'prep', to: 'needs' }],
      }),
      workflowName: 'resume-failed',
      params: {},
      repairEnabled: false,
      maxRepairs: 0,
    });
    expect(first.status).toBe('failed');
    writeFileSync(fixed, '');
    const resumed = await host.resume(first.run_id);
    expect(resumed).toMatchObject({ success: true, result: { stdout: 'prepared and fixed' } });
    expect(resumed.steps.map((s) => `${s.node_id}:${s.cached ? 'cached' : s.status}`)).toEqual([
      'prep:completed',
      'needs:failed',
      'prep:cached',
      'needs:completed',
    ]);
    expect(resumed.steps.some((s) => s.interrupted)).toBe(false);
    expect([countLines(join(dir, 'prep.count')), countLines(join(dir, 'needs.count'))]).toEqual([1, 1]);
  });
});

describe('branches on actions', () => {
  const branching = (tag: string): WorkflowInput => ({
    inputs: { mode: { type: 'string' } },
    nodes: [
      { id: 'check', type: 'shell', params: { command: 'test "${mode}" = fast' } },
      { id: 'fast', type: 'shell', params: { command: `echo fast >> ${dir}/${tag}.branch` } },
      { id: 'slow', type: 'shell', params: { command: `echo slow >> ${dir}/${tag}.branch` } },
    ],
    edges: [
      { from: 'check', to: 'fast', action: 'default' },
      { from: 'check', to: 'slow', action: 'error' },
    ],
  });

  it('follows the default edge when the node succeeds', async () => {
    const report = await run(branching('a'), { mode: 'fast' });
    expect(report.status).toBe('succeeded');
    expect(executed(report)).toEqual(['check#1:completed', 'fast#1:completed']);
    expect(readFileSync(join(dir, 'a.branch'), 'utf8')).toBe('fast\n');
  });

  it('follows the error edge when the node fails, and the run still succeeds', async () => {
    const report = await run(branching('b'), { mode: 'slow' });
    expect(report.status).toBe('succeeded');
    expect(report.steps.map((s) => [s.node_id, s.action])).toEqual([
      ['check', 'error'],
      ['slow', 'default'],
    ]);
    expect(readFileSync(join(dir, 'b.branch'), 'utf8')).toBe('slow\n');
  });
});

describe('loops', () => {
  it('visits nodes again around a cycle, with one record per visit', async () => {
    const counter = join(dir, 'loop.count');
    const report = await run({
      nodes: [
        { id: 'inc', type: 'shell', params: { command: `echo x >> ${counter}; printf '%s' $(wc -l < ${counter})` } },
        { id: 'enough', type: 'shell', params: { command: 'test ${inc.stdout} -ge 3' } },
        { id: 'done', type: 'transform', params: { expression: '$number($)', input: '${inc.stdout}' } },
      ],
      edges: [
        { from: 'inc', to: 'enough' },
        { from: 'enough', to: 'inc', action: 'error' },
        { from: 'enough', to: 'done' },
      ],
      outputs: { rounds: { source: '${done.result}' } },
    });
    expect(report.status).toBe('succeeded');
    expect(report.result).toEqual({ rounds: 3 });
    expect(executed(report)).toEqual([
      'inc#1:completed',
      'enough#1:failed',
      'inc#2:completed',
      'enough#2:failed',
      'inc#3:completed',
      'enough#3:completed',
      'done#1:completed',
    ]);
    expect(new Set(report.steps.map((s) => s.seq)).size).toBe(7);
    expect(countLines(counter)).toBe(3);
  });
});

describe('templates', () => {
  const inputs = { n: 42, flag: true, cfg: { a: 1, list: ['x', 'y'] }, nothing: null };

  it('keeps the type of a whole-string template', async () => {
    const report = await run(
      {
        inputs: { n: { type: 'number' }, flag: { type: 'boolean' }, cfg: { type: 'object' }, nothing: { required: false } },
        nodes: [
          {
            id: 'types',
            type: 'transform',
            params: { expression: '$', input: { n: '${n}', flag: '${flag}', cfg: '${cfg}', second: '${cfg.list[1]}', nothing: '${nothing}' } },
          },
        ],
        outputs: { types: { source: '${types.result}' }, n: { source: '${n}' } },
      },
      inputs,
    );
    expect(report.result).toEqual({ types: { n: 42, flag: true, cfg: { a: 1, list: ['x', 'y'] }, second: 'y', nothing: null }, n: 42 });
  });

  it('stringifies values inside text: objects as JSON, null as empty', async () => {
    const report = await run(
      {
        inputs: { n: {}, flag: {}, cfg: {}, nothing: { required: false } },
        nodes: [{ id: 'text', type: 'shell', params: { stdin: 'n=${n} flag=${flag} cfg=${cfg} list=${cfg.list} nothing=[${nothing}]', command: 'cat' } }],
        outputs: { text: { source: 'said: ${text.stdout}' } },
      },
      inputs,
    );
    expect(report.result).toEqual({ text: 'said: n=42 flag=true cfg={"a":1,"list":["x","y"]} list=["x","y"] nothing=[]' });
  });

  it('follows a path through a node’s JSON stdout, keeping types when whole', async () => {
    const report = await run({
      nodes: [
        { id: 'fetch', type: 'shell', params: { command: `echo '{"user":{"name":"Ada","tags":["x","y"],"age":36}}'` } },
        { id: 'use', type: 'shell', params: { command: 'echo ${fetch.stdout.user.name} ${fetch.stdout.user.tags[1]}' } },
        { id: 'typed', type: 'transform', params: { expression: '$', input: { age: '${fetch.stdout.user.age}', tags: '${fetch.stdout.user.tags}' } } },
      ],
      edges: [
        { from: 'fetch', to: 'use' },
        { from: 'use', to: 'typed' },
      ],
      outputs: { line: { source: '${use.stdout}' }, typed: { source: '${typed.result}' }, name: { source: '${fetch.stdout.user.name}' } },
    });
    expect(report.result).toEqual({ line: 'Ada y', typed: { age: 36, tags: ['x', 'y'] }, name: 'Ada' });
  });

  it('passes $${x} through as a literal ${x}', async () => {
    const report = await run(
      {
        inputs: { name: {} },
        nodes: [{ id: 'lit', type: 'shell', params: { command: `printf '%s|%s' '$\${name}' '\${name}'` } }],
      },
      { name: 'Ada' },
    );
    expect(report.status).toBe('succeeded');
    expect(report.result.stdout).toBe('${name}|Ada');
  });

  it('fails the node before it runs when a template does not resolve, listing the available paths', async () => {
    const marker = join(dir, 'unresolved-ran');
    const report = await run({
      nodes: [
        { id: 'fetch', type: 'shell', params: { command: `echo '{"user":{"name":"Ada"}}'` } },
        { id: 'use', type: 'shell', params: { command: `touch ${marker}; echo \${fetch.stdout.user.nmae}` } },
      ],
      edges: [{ from: 'fetch', to: 'use' }],
    });
    expect(report.status).toBe('failed');
    expect(existsSync(marker)).toBe(false);
    const [error] = report.errors;
    expect(error).toMatchObject({ node_id: 'use', category: 'template', fixable: true });
    expect(error?.message).toContain('${fetch.stdout.user.nmae}');
    expect(error?.message).toContain("'fetch.stdout.user' has no key 'nmae' (keys: name)");
    expect(error?.message).toMatch(/Available paths: .*fetch\.stdout\.user\.name/);
    expect(report.steps.at(-1)).toMatchObject({ node_id: 'use', status: 'failed' });
    expect(report.metrics.nodes_executed).toBe(1);
  });
});

describe('validation before the run', () => {
  it('fails an invalid workflow before any node runs, with every issue in the error', async () => {
    const marker = join(dir, 'invalid-ran');
    const report = await run({
      nodes: [
        { id: 'a', type: 'shell', params: { command: `touch ${marker}` } },
        { id: 'b', type: 'shell', params: { command: 'echo ${a.stdot}' } },
      ],
      edges: [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'nowhere' },
      ],
    });
    expect(report.status).toBe('failed');
    expect(existsSync(marker)).toBe(false);
    expect(report.steps).toEqual([]);
    expect(report.errors[0]).toMatchObject({ category: 'validation' });
    expect(report.errors[0]?.message).toContain('nowhere');
    expect(report.errors[0]?.message).toContain('stdout');
  });
});

describe('inputs from the command line', () => {
  const typed = writeWorkflow(dir, 'typed-inputs', {
    inputs: {
      count: { type: 'integer' },
      ratio: { type: 'number', required: false, default: 0.5 },
      loud: { type: 'boolean' },
      tags: { type: 'array' },
      who: { type: 'string', description: 'who to greet' },
    },
    nodes: [
      {
        id: 'echo',
        type: 'transform',
        params: { expression: '$', input: { count: '${count}', ratio: '${ratio}', loud: '${loud}', tags: '${tags}', who: '${who}' } },
      },
    ],
    outputs: { got: { source: '${echo.result}' } },
  });

  it('coerces name=value strings to the declared input types and fills defaults', async () => {
    const out = await cli(['run', typed, 'count=7', 'loud=yes', 'tags=["a",2]', 'who=42', '--output-format', 'json']);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout).result).toEqual({ got: { count: 7, ratio: 0.5, loud: true, tags: ['a', 2], who: '42' } });
  });

  it('refuses a missing required input or a value of the wrong type with exit code 2, saying what to pass', async () => {
    const missing = await cli(['run', typed, 'count=7', 'loud=true', 'tags=[]']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("missing required input 'who' (who to greet): pass who=<string>");
    const wrong = await cli(['run', typed, 'count=7.5', 'loud=maybe', 'tags=[]', 'who=x']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("input 'count': expected an integer");
    expect(wrong.stderr).toContain("input 'loud': expected a boolean");
  });
});
