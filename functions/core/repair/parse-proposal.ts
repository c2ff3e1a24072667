import { builtOnFirstUse } from '../lazy-schema.ts';
import * as z from '../zod.ts';

/** What the repair LLM must answer: the whole repaired workflow and why, in one sentence. */
export const RepairProposalSchema = builtOnFirstUse(() =>
  z.object({
    workflow: z.record(z.string(), z.unknown(), { error: 'the reply needs "workflow": the whole repaired workflow as a JSON object' }),
    reason: z.string({ error: 'the reply needs "reason": one sentence saying what was fixed' }).check(z.trim(), z.minLength(1, '"reason" must not be empty')),
  }),
);
export type RepairProposal = z.infer<typeof RepairProposalSchema>;

export type ParsedProposal = { ok: true; proposal: RepairProposal } | { ok: false; message: string };

const FENCE = /```(?:json)?[ \t]*\r?\n([\s\S]*?)```/;
const SAMPLE_CHARS = 200;

const sample = (text: string): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > SAMPLE_CHARS ? `${flat.slice(0, SAMPLE_CHARS)}…` : flat || '(empty)';
};

/**
 * Reads a repair reply: the message text is one JSON object, bare or in a ```json fence (text around a
 * fence is ignored). Anything else is refused with a message saying what was wrong, for the next attempt.
 */
export function parseProposal(text: string): ParsedProposal {
  const trimmed = text.trim();
  const fenced = FENCE.exec(trimmed)?.[1];
  const json = trimmed.startsWith('{') ? trimmed : fenced?.trim();
  if (json === undefined) {
    return { ok: false, message: `the reply is neither a bare JSON object nor a \`\`\`json fenced block: ${sample(trimmed)}` };
  }
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    return { ok: false, message: `the reply is not valid JSON (${(error as Error).message}): ${sample(json)}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return {
      ok: false,
      message: `the reply must be a JSON object {"workflow": ..., "reason": ...}, not ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}`,
    };
  }
  const parsed = RepairProposalSchema.safeParse(value);
  if (!parsed.success) {
    return { ok: false, message: parsed.error.issues.map((i) => i.message).join('; ') };
  }
  return { ok: true, proposal: parsed.data };
}
