import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AslDefinition } from '../../../functions/core/definition.ts';
import { WorkflowSchema } from '../../../functions/core/ir.ts';
import { MemoryRunStore } from '../../../functions/core/memory-run-store.ts';
import { definitionKey, FileDefinitionMemo } from '../../../functions/hosts/local/definition-memo.ts';
import { LocalHost } from '../../../functions/hosts/local/local-host.ts';
import { killStrayChildren, makeTempDir, parseJsonOutput, REPO, runCli } from '../../support/cli-process.ts';

const dir = makeTempDir('definition-memo');
afterAll(() => killStrayChildren());

/** What Step Functions refuses: `Next` names a state the machine does not have. */
const invalid: AslDefinition = {
  StartAt: 'Go',
  States: { Go: { Type: 'Pass', Next: 'Nowhere' } },
} as unknown as AslDefinition;
const INVALID = /State machine definition is invalid/;

const start = {
  workflow: WorkflowSchema.parse({ nodes: [{ id: 'hi', type: 'shell', params: { command: 'echo hello' } }] }),
  workflowName: 'hello',
  params: {},
  repairEnabled: false,
  maxRepairs: 0,
};

describe('the local host with a memo of validated definitions', () => {
  it('validates a definition it has not seen, runs it, and remembers it by its hash', async () => {
    const memo = new FileDefinitionMemo(join(dir, 'first'));
    const host = new LocalHost({ store: new MemoryRunStore(), validatedDefinitions: memo });
    const report = await host.start(start);
    expect(report.status).toBe('succeeded');
    expect(readdirSync(join(dir, 'first'))).toHaveLength(1);
    // The same definition in the next host (the next CLI command): found, and the run goes on as before.
    const again = new LocalHost({ store: new MemoryRunStore(), validatedDefinitions: memo });
    expect((await again.start(start)).status).toBe('succeeded');
    expect(readdirSync(join(dir, 'first'))).toHaveLength(1);
  });

  it('still refuses an invalid definition, and does not remember it, so the next host refuses it too', () => {
    const memo = new FileDefinitionMemo(join(dir, 'invalid'));
    expect(() => new LocalHost({ store: new MemoryRunStore(), definition: structuredClone(invalid), validatedDefinitions: memo })).toThrow(INVALID);
    expect(memo.has(definitionKey(invalid))).toBe(false);
    expect(existsSync(join(dir, 'invalid'))).toBe(false);
    expect(() => new LocalHost({ store: new MemoryRunStore(), definition: structuredClone(invalid), validatedDefinitions: memo })).toThrow(INVALID);
  });

  it('validates a definition whose hash differs from every remembered one, however small the change', () => {
    const memo = new FileDefinitionMemo(join(dir, 'other'));
    const valid = { StartAt: 'Go', States: { Go: { Type: 'Pass', End: true } } } as unknown as AslDefinition;
    // asl-validator adds QueryLanguage to the definition it validates: the key is the definition as given.
    const key = definitionKey(valid);
    expect(() => new LocalHost({ store: new MemoryRunStore(), definition: valid, validatedDefinitions: memo })).not.toThrow();
    expect(memo.has(key)).toBe(true);
    const changed = { StartAt: 'Go', States: { Go: { Type: 'Pass', End: true, Next: 'Go' } } } as unknown as AslDefinition;
    expect(() => new LocalHost({ store: new MemoryRunStore(), definition: changed, validatedDefinitions: memo })).toThrow(INVALID);
  });

  it('with validateDefinition: false, validates nothing and remembers nothing', () => {
    const memo = new FileDefinitionMemo(join(dir, 'off'));
    expect(() => new LocalHost({ store: new MemoryRunStore(), definition: invalid, validateDefinition: false, validatedDefinitions: memo })).not.toThrow();
    // Nothing was validated, so nothing is remembered: a host that validates still refuses it.
    expect(memo.has(definitionKey(invalid))).toBe(false);
    expect(() => new LocalHost({ store: new MemoryRunStore(), definition: invalid, validatedDefinitions: memo })).toThrow(INVALID);
  });

  it('runs on when the memo cannot be written (a read-only state dir only costs a validation next time)', async () => {
    const memo = new FileDefinitionMemo('/proc/flowmend-cannot-write-here');
    const host = new LocalHost({ store: new MemoryRunStore(), validatedDefinitions: memo });
    expect((await host.start(start)).status).toBe('succeeded');
    expect(existsSync('/proc/flowmend-cannot-write-here')).toBe(false);
  });
});

describe('flowmend run (the bundle, whose validator loads only to validate)', () => {
  it("starts on a new state dir without validating: the build validated the CLI's default definition", async () => {
    // The key of the definition a default local host runs, as the host asks its memo for it.
    const asked: string[] = [];
    new LocalHost({ store: new MemoryRunStore(), validatedDefinitions: { has: (key) => asked.push(key) > 0, add: () => {} } });
    expect(asked).toHaveLength(1);
    expect(existsSync(join(REPO, 'dist', 'validated-definitions', asked[0] as string))).toBe(true);

    const stateDir = join(dir, 'cli-state');
    const hello = join(REPO, 'examples', 'hello.json');
    for (let i = 0; i < 2; i += 1) {
      const out = await runCli(['run', hello, '--output-format', 'json'], { stateDir });
      expect(out.code, out.stderr).toBe(0);
      expect(parseJsonOutput(out)).toMatchObject({ success: true });
    }
    // Nothing left to remember in the state dir: the definition was known before the first run.
    expect(existsSync(join(stateDir, 'validated-definitions'))).toBe(false);
  });
});

describe('FileDefinitionMemo with the definitions the build validated', () => {
  it('knows a shipped key without a state dir, and remembers nothing then', () => {
    const shipped = join(dir, 'shipped');
    const known = new FileDefinitionMemo(join(dir, 'remembered'), [shipped]);
    known.add('a'.repeat(64));
    const shippedOnly = new FileDefinitionMemo(undefined, [join(dir, 'remembered')]);
    expect(shippedOnly.has('a'.repeat(64))).toBe(true);
    expect(shippedOnly.has('b'.repeat(64))).toBe(false);
    shippedOnly.add('b'.repeat(64));
    expect(readdirSync(join(dir, 'remembered'))).toEqual(['a'.repeat(64)]);
    expect(existsSync(shipped)).toBe(false);
  });
});
