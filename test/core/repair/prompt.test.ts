import { describe, expect, it } from 'vitest';
import { buildRepairPrompt, describeOutputShape, REPAIR_SYSTEM_PROMPT } from '../../../functions/core/repair/index.ts';
import { context, done, runtime, templateError, wf } from './support.ts';

const workflow = wf({
  description: 'greets the octocat',
  nodes: [
    { id: 'fetch', type: 'shell', params: { command: 'curl -s api' } },
    { id: 'greet', type: 'shell', params: { command: 'echo hello ${fetch.stdout.user.handle}' } },
  ],
  edges: [{ from: 'fetch', to: 'greet' }],
});

const bigText = 'x'.repeat(5000);
const fetchOutputs = { stdout: JSON.stringify({ user: { login: 'octocat', id: 42 }, blob: bigText }), stderr: '', exit_code: 0 };

describe('buildRepairPrompt', () => {
  const prompt = buildRepairPrompt(context(workflow, runtime(templateError('greet', ['${fetch.stdout.user.handle}'])), [done('fetch', fetchOutputs)]));

  it('carries the whole IR, the error and the failed node', () => {
    expect(prompt).toContain(JSON.stringify(workflow, null, 2));
    expect(prompt).toContain("Failed node: 'greet' (type shell)");
    expect(prompt).toContain('Error [template] TEMPLATE_UNRESOLVED: Unresolved template: ${fetch.stdout.user.handle}');
    expect(prompt).toContain('Purpose: greets the octocat');
  });

  it('lists the completed nodes as frozen with the shape of their outputs, not the outputs themselves', () => {
    expect(prompt).toContain('## Completed nodes (frozen)');
    expect(prompt).toContain('- fetch (shell, side effects: yes, action: default)');
    expect(prompt).toMatch(/stdout: string holding JSON \(\d+ chars\); paths go through it:/);
    expect(prompt).toContain('login: string (7 chars) "octocat"');
    expect(prompt).toContain('id: number 42');
    expect(prompt).toContain('exit_code: number 0');
    expect(prompt).not.toContain(bigText);
  });

  it('lists the available template paths', () => {
    expect(prompt).toMatch(/## Available template paths\n.*\$\{fetch\.stdout\.user\.login\}/);
    expect(prompt).toContain('${fetch.exit_code}');
  });

  it('lists the node types with their params and outputs', () => {
    expect(prompt).toContain('- shell: params command, stdin');
    expect(prompt).toContain('outputs stdout, stderr, exit_code');
  });

  it('feeds refusals of the previous attempt back', () => {
    const again = buildRepairPrompt(context(workflow, runtime(templateError('greet', ['${x}']))), ['node \'fetch\' lost its param "command"']);
    expect(again).toContain('## Your previous reply was refused\n- node \'fetch\' lost its param "command"');
  });

  it('asks for the reply format and forbids dropping fields in the system prompt', () => {
    expect(REPAIR_SYSTEM_PROMPT).toContain('{"workflow": <the whole repaired workflow>, "reason": "<one sentence');
    expect(REPAIR_SYSTEM_PROMPT).toMatch(/Never drop a param/);
    expect(REPAIR_SYSTEM_PROMPT).toMatch(/Completed nodes are frozen/);
  });
});

describe('describeOutputShape', () => {
  it('stays bounded for a huge output', () => {
    const outputs = { response: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, { deep: { deeper: [i] } }])) };
    const lines = describeOutputShape(outputs);
    expect(lines.length).toBeLessThanOrEqual(42);
    expect(lines[0]).toBe('  response: object (500 keys)');
  });
});
