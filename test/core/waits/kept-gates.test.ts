import { describe, expect, it } from 'vitest';
import { WorkflowSchema } from '../../../functions/core/ir.ts';
import { checkProposal } from '../../../functions/core/repair/check-proposal.ts';
import { builtinCatalog } from '../../../functions/nodes/catalog.ts';

const before = WorkflowSchema.parse({
  repair: { approval: 'llm' },
  nodes: [
    { id: 'draft', type: 'shell', params: { command: 'exit 1' } },
    { id: 'send', type: 'shell', approval: 'required', params: { command: 'echo ${draft.stdout}' } },
  ],
  edges: [{ from: 'draft', to: 'send' }],
});

const propose = (change: (w: typeof before) => void, keepUnchanged = true) => {
  const proposal = structuredClone(before);
  change(proposal);
  return checkProposal({ before, proposal, completed: [], catalog: builtinCatalog, ...(keepUnchanged ? { keepUnchanged: { reason: 'fix draft' } } : {}) });
};

describe('a repair keeps the person in the loop', () => {
  it('refuses a machine proposal that drops a gate, the gated node, or the repair policy', () => {
    const fixed = (w: typeof before) => {
      (w.nodes[0] as { params: Record<string, unknown> }).params.command = 'echo fixed';
    };
    expect(propose(fixed)).toMatchObject({ ok: true });
    const ungated = propose((w) => {
      fixed(w);
      delete (w.nodes[1] as { approval?: string }).approval;
    });
    expect(ungated).toMatchObject({ ok: false, problems: [expect.stringContaining('node \'send\' has "approval": "required"')] });
    const unpolicied = propose((w) => {
      fixed(w);
      w.repair = { approval: 'none' };
    });
    expect(unpolicied).toMatchObject({ ok: false, problems: [expect.stringContaining('top-level "repair" changed')] });
  });

  it("lets a person's own patch change gates and the policy", () => {
    expect(propose((w) => delete (w.nodes[1] as { approval?: string }).approval, false)).toMatchObject({ ok: true });
  });
});
