/** USD per million tokens. The one price table: the llm node and the repair service both use it. */
export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
}

/** Model id prefixes, longest match wins (`claude-haiku-4-5-20251001` matches `claude-haiku-4-5`). */
export const MODEL_PRICES: Readonly<Record<string, ModelPrice>> = {
  'claude-opus-4-1': { inputPerMTok: 15, outputPerMTok: 75 },
  'claude-opus-4-0': { inputPerMTok: 15, outputPerMTok: 75 },
  'claude-opus-4-20250514': { inputPerMTok: 15, outputPerMTok: 75 },
  'claude-opus-4': { inputPerMTok: 5, outputPerMTok: 25 },
  'claude-sonnet-4': { inputPerMTok: 3, outputPerMTok: 15 },
  'claude-3-7-sonnet': { inputPerMTok: 3, outputPerMTok: 15 },
  'claude-3-5-sonnet': { inputPerMTok: 3, outputPerMTok: 15 },
  'claude-haiku-4': { inputPerMTok: 1, outputPerMTok: 5 },
  'claude-3-5-haiku': { inputPerMTok: 0.8, outputPerMTok: 4 },
  'claude-3-haiku': { inputPerMTok: 0.25, outputPerMTok: 1.25 },
};

/** Unknown ids of a known family are priced as the family's current model rather than as free. */
const FAMILY_PRICES: readonly [string, ModelPrice][] = [
  ['opus', { inputPerMTok: 5, outputPerMTok: 25 }],
  ['sonnet', { inputPerMTok: 3, outputPerMTok: 15 }],
  ['haiku', { inputPerMTok: 1, outputPerMTok: 5 }],
];

export const priceOf = (model: string): ModelPrice | undefined => {
  const prefix = Object.keys(MODEL_PRICES)
    .filter((p) => model.startsWith(p))
    .sort((a, b) => b.length - a.length)[0];
  if (prefix !== undefined) return MODEL_PRICES[prefix];
  return FAMILY_PRICES.find(([family]) => model.includes(family))?.[1];
};

export interface TokenCounts {
  input_tokens: number;
  output_tokens: number;
  /** Prompt-cache writes cost 1.25x input, reads 0.1x. */
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** Cost in USD, rounded to a millionth of a dollar; 0 for a model with no known price. */
export const costUsd = (model: string, tokens: TokenCounts): number => {
  const price = priceOf(model);
  if (price === undefined) return 0;
  const input = tokens.input_tokens + 1.25 * (tokens.cache_creation_input_tokens ?? 0) + 0.1 * (tokens.cache_read_input_tokens ?? 0);
  const cost = (input * price.inputPerMTok + tokens.output_tokens * price.outputPerMTok) / 1_000_000;
  return Math.round(cost * 1_000_000) / 1_000_000;
};
