import { describe, expect, it } from 'vitest';
import { parseProposal } from '../../../functions/core/repair/index.ts';

const body = { workflow: { nodes: [{ id: 'a', type: 'shell', params: { command: 'echo' } }] }, reason: 'Fixed the command.' };

describe('parseProposal', () => {
  it('reads a bare JSON object', () => {
    expect(parseProposal(`  ${JSON.stringify(body)}\n`)).toEqual({ ok: true, proposal: body });
  });

  it('reads a ```json fence, ignoring text around it', () => {
    const text = `Here is the fix:\n\`\`\`json\n${JSON.stringify(body, null, 2)}\n\`\`\`\nDone.`;
    expect(parseProposal(text)).toEqual({ ok: true, proposal: body });
  });

  it('refuses prose without JSON', () => {
    const result = parseProposal('I think you should change the command to echo hi.');
    expect(result).toMatchObject({ ok: false });
    expect(!result.ok && result.message).toMatch(/neither a bare JSON object nor a ```json fenced block: I think/);
  });

  it('refuses broken JSON and says so', () => {
    const result = parseProposal('{"workflow": {"nodes": [}');
    expect(!result.ok && result.message).toMatch(/not valid JSON/);
  });

  it('refuses an object without "workflow"', () => {
    const result = parseProposal(JSON.stringify({ reason: 'x', nodes: [] }));
    expect(!result.ok && result.message).toMatch(/needs "workflow"/);
  });

  it('refuses an object without a reason', () => {
    const result = parseProposal(JSON.stringify({ workflow: body.workflow }));
    expect(!result.ok && result.message).toMatch(/needs "reason"/);
  });

  it('refuses a JSON array', () => {
    const result = parseProposal('```json\n[1, 2]\n```');
    expect(!result.ok && result.message).toMatch(/must be a JSON object/);
  });
});
