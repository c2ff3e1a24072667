// What each command loads of Node's own modules (issue 13: nothing the command does not use), read off the
// real bin's bundles: a preload prints process.moduleLoadList at exit, without itself loading a stream.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeTempDir, REPO } from '../../support/cli-process.ts';

const BIN = join(REPO, 'bin', 'flowmend.cjs');
const hello = join(REPO, 'examples', 'hello.json');
const dir = makeTempDir('command-loads');
const stateDir = join(dir, 'state');
const probe = join(dir, 'probe.cjs');
writeFileSync(
  probe,
  "process.on('exit', () => require('node:fs').writeSync(2, `\\nLOADED ${JSON.stringify(process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13)))}\\nPACKAGES ${JSON.stringify([...new Set(Object.keys(require.cache).map((f) => /node_modules\\/((@[^/]+\\/)?[^/]+)/.exec(f)?.[1]).filter(Boolean))])}\\nFILES ${JSON.stringify(Object.keys(require.cache).map((f) => /node_modules\\/(.*)$/.exec(f)?.[1]).filter(Boolean))}\\n`));\n",
);

/** The built-in modules and the packages a command line loaded, and its output. */
const loads = (args: string[], env: NodeJS.ProcessEnv = {}) => {
  const base: NodeJS.ProcessEnv = { ...process.env, FLOWMEND_STATE_DIR: '' };
  for (const name of Object.keys(base)) if (name.startsWith('OTEL_')) delete base[name];
  const child = spawnSync(process.execPath, ['-r', probe, BIN, ...args, '--output-format', 'json'], { encoding: 'utf8', env: { ...base, ...env } });
  const line = (prefix: string) =>
    child.stderr
      .split('\n')
      .find((l) => l.startsWith(prefix))
      ?.slice(prefix.length) ?? '[]';
  return {
    modules: JSON.parse(line('LOADED ')) as string[],
    packages: JSON.parse(line('PACKAGES ')) as string[],
    files: JSON.parse(line('FILES ')) as string[],
    stdout: child.stdout,
    status: child.status,
  };
};

describe('what each command loads', () => {
  it("opens the store from the bundle's better-sqlite3: of its package, only the native addon comes from node_modules", () => {
    const listed = loads(['runs', '--state-dir', stateDir]);
    expect(listed.status).toBe(0);
    expect(listed.files.filter((file) => file.startsWith('better-sqlite3/'))).toEqual(['better-sqlite3/build/Release/better_sqlite3.node']);
    expect(listed.packages).not.toContain('bindings');
  });

  it('a run loads the modules it uses: child processes for its shell nodes, crypto for ids and cache keys', () => {
    const run = loads(['run', hello, '--state-dir', stateDir]);
    expect(run.status).toBe(0);
    expect(run.modules).toEqual(expect.arrayContaining(['child_process', 'crypto']));
    // A shell node's process-group record is checked and removed synchronously: no promise-based fs for it.
    expect(run.modules).not.toContain('fs/promises');
    // Durations come from process.hrtime (nodes/monotonic-clock.ts): the `performance` global loads perf_hooks.
    expect(run.modules).not.toContain('perf_hooks');
    // The record is removed with an unlink: fs.rmSync loads Node's rimraf module at its first call.
    expect(run.modules).not.toContain('internal/fs/rimraf');
  });

  it('a run without shell nodes loads no child process module', () => {
    const workflow = join(dir, 'transform-only.json');
    // A range is not bounded by its input (jsonata-inline.ts): the transform runs in a worker thread (a timeout can end it: docs/security.md), which brings net and streams.
    writeFileSync(workflow, JSON.stringify({ nodes: [{ id: 'add', type: 'transform', params: { expression: '$sum([1..$])', input: 3 } }], edges: [] }));
    const run = loads(['run', workflow, '--state-dir', stateDir]);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ result: { result: 6 } });
    expect(run.modules).not.toContain('child_process');
    expect(run.modules).toContain('worker_threads');
  });

  it('a resume that replays its transforms starts no worker thread, finds no blobs to sweep without the promise-based fs, and times its node without perf_hooks', () => {
    const gate = join(dir, 'gate');
    const workflow = join(dir, 'fail-last.json');
    writeFileSync(
      workflow,
      JSON.stringify({
        nodes: [
          { id: 'add', type: 'transform', params: { expression: '$ + 1', input: 1 } },
          { id: 'gate', type: 'shell', params: { command: `test -f '${gate}'` } },
        ],
        edges: [{ from: 'add', to: 'gate' }],
      }),
    );
    const failed = loads(['run', workflow, '--no-repair', '--state-dir', stateDir]);
    expect(failed.status).toBe(1);
    writeFileSync(gate, '');
    const resumed = loads(['resume', (JSON.parse(failed.stdout) as { run_id: string }).run_id, '--state-dir', stateDir]);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: 'succeeded', metrics: { nodes_cached: 1 } });
    for (const name of ['worker_threads', 'fs/promises', 'perf_hooks']) expect(resumed.modules, name).not.toContain(name);
  });

  it('a run with no exporter configured loads no OpenTelemetry package; with an OTLP endpoint it loads the SDK', () => {
    const quiet = loads(['run', hello, '--state-dir', stateDir]);
    expect(quiet.status).toBe(0);
    expect(quiet.packages.filter((name) => name.startsWith('@opentelemetry/'))).toEqual([]);
    // Nothing listens there: the run still succeeds, and its spans are dropped when the export fails.
    const traced = loads(['run', hello, '--state-dir', stateDir], { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_TIMEOUT: '200' });
    expect(traced.status).toBe(0);
    expect(traced.packages).toEqual(expect.arrayContaining(['@opentelemetry/sdk-trace', '@opentelemetry/exporter-trace-otlp-http']));
    // Each OTLP exporter loads only for its own signal (serve's Prometheus-only metrics load neither).
    const tracesOnly = loads(['run', hello, '--state-dir', stateDir], {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9/v1/traces',
      OTEL_EXPORTER_OTLP_TIMEOUT: '200',
    });
    expect(tracesOnly.status).toBe(0);
    expect(tracesOnly.packages).toContain('@opentelemetry/exporter-trace-otlp-http');
    expect(tracesOnly.packages).not.toContain('@opentelemetry/exporter-metrics-otlp-http');
  });

  it('validate loads no stream, network, crypto, child process or promise-based fs module', () => {
    const validated = loads(['validate', hello]);
    expect(validated.status).toBe(0);
    for (const name of ['stream', 'net', 'crypto', 'child_process', 'fs/promises']) expect(validated.modules, name).not.toContain(name);
  });

  it('status, runs and logs load no crypto, child process or promise-based fs module', () => {
    const runId = (JSON.parse(loads(['run', hello, '--state-dir', stateDir]).stdout) as { run_id: string }).run_id;
    for (const args of [['status', runId], ['runs'], ['logs', runId]]) {
      const read = loads([...args, '--state-dir', stateDir]);
      expect(read.status, args.join(' ')).toBe(0);
      for (const name of ['crypto', 'child_process', 'fs/promises']) expect(read.modules, `${args[0]}: ${name}`).not.toContain(name);
    }
  });
});
