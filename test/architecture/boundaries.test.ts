import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

const sourcesUnder = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(ROOT, dir, file));

/** Every module specifier a file imports (static and dynamic). */
const importsOf = (file: string): string[] => {
  const text = readFileSync(file, 'utf8');
  const statements = /^(?:import|export)\s+(?:type\s+)?(?:\{[^}]*\}|\*(?:\s+as\s+\w+)?|\w+(?:\s*,\s*\{[^}]*\})?)\s+from\s+'([^']+)'/gm;
  const bare = /^import\s+'([^']+)'/gm;
  const dynamic = /\bimport\(\s*'([^']+)'\s*\)/g;
  return [statements, bare, dynamic].flatMap((pattern) => [...text.matchAll(pattern)].map((m) => m[1] as string));
};

describe('functions/core (DESIGN: pure engine)', () => {
  const files = sourcesUnder('functions/core');

  it('imports only zod, jsonata, node:crypto and its own modules', () => {
    // zod/mini and its English messages, imported by functions/core/zod.ts only (see below).
    const allowed = (spec: string) => spec.startsWith('.') || ['zod/mini', 'zod/v4/locales/en.js', 'jsonata', 'node:crypto'].includes(spec);
    const offenders = files.flatMap((file) =>
      importsOf(file)
        .filter((spec) => !allowed(spec))
        .map((spec) => `${relative(ROOT, file)} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  it('never reads the environment', () => {
    const offenders = files.filter((file) => /process\.env/.test(readFileSync(file, 'utf8'))).map((file) => relative(ROOT, file));
    expect(offenders).toEqual([]);
  });
});

describe('runners (DESIGN invariant 5: least privilege)', () => {
  it('never import a store, the AWS SDK for DynamoDB/S3, or the engine', () => {
    const forbidden = /dynamo|run-store|sqlite|@aws-sdk\/client-(dynamodb|s3)|@aws-sdk\/lib-dynamodb|core\/engine/;
    const files = [
      ...sourcesUnder('functions/nodes'),
      ...['run-node', 'run-shell', 'run-http', 'run-llm', 'run-transform'].map((h) => join(ROOT, 'functions/hosts/lambda', `${h}.ts`)),
    ];
    const offenders = files.flatMap((file) =>
      importsOf(file)
        .filter((spec) => forbidden.test(spec))
        .map((spec) => `${relative(ROOT, file)} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });
});

describe('layers (core, then nodes and adapters, then hosts)', () => {
  it('runners import no adapter and no SDK of a service: they reach the outside through ports the hosts inject', () => {
    const forbidden = /\/adapters\/|^@anthropic-ai\/|^@modelcontextprotocol\/|^@aws-sdk\//;
    const offenders = sourcesUnder('functions/nodes').flatMap((file) =>
      importsOf(file)
        .filter((spec) => forbidden.test(spec))
        .map((spec) => `${relative(ROOT, file)} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  it('adapters import no node type and no host', () => {
    const offenders = sourcesUnder('functions/adapters').flatMap((file) =>
      importsOf(file)
        .filter((spec) => /\/(nodes|hosts)\//.test(spec))
        .map((spec) => `${relative(ROOT, file)} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  it('core, nodes and adapters import no host', () => {
    const files = ['functions/core', 'functions/nodes', 'functions/adapters'].flatMap(sourcesUnder);
    const offenders = files.flatMap((file) =>
      importsOf(file)
        .filter((spec) => /\/hosts\//.test(spec))
        .map((spec) => `${relative(ROOT, file)} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });
});

describe('one zod: functions/core/zod.ts (zod/mini with English messages)', () => {
  it('no other module imports zod: zod classic in any bundle costs each cold start ~20 ms (README: zod/mini)', () => {
    const files = ['functions', 'bin', 'infra'].flatMap(sourcesUnder);
    const offenders = files.flatMap((file) =>
      importsOf(file)
        .filter((spec) => (spec === 'zod' || spec.startsWith('zod/')) && relative(ROOT, file) !== join('functions', 'core', 'zod.ts'))
        .map((spec) => `${relative(ROOT, file)} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });
});

describe('core has one entry (functions/core/index.ts, an explicit export list), and its zod', () => {
  it('nodes, adapters, hosts, infra, bin and bench import core only through its index (and zod through core/zod.ts)', () => {
    const files = ['functions/nodes', 'functions/adapters', 'functions/hosts', 'infra', 'bin', 'bench'].flatMap(sourcesUnder);
    const offenders = files.flatMap((file) =>
      importsOf(file)
        .filter((spec) => spec.startsWith('.') && /(^|\/)core\//.test(spec) && !/(^|\/)core\/(index|zod)\.ts$/.test(spec))
        .map((spec) => `${relative(ROOT, file)} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  it('the index lists its exports by name (no `export *`)', () => {
    expect(readFileSync(join(ROOT, 'functions/core/index.ts'), 'utf8')).not.toMatch(/export\s+\*/);
  });
});
