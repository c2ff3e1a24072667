/** A plain object (not null, not an array): a JSON object or a record of outputs. */
export const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The object or array a string holds as JSON, or undefined. Templates, extract paths and the repairer
 * go through such strings (a shell node's stdout, say); JSON primitives are never read out of text.
 */
export const jsonContainerIn = (text: string): object | undefined => {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return undefined;
  try {
    const value: unknown = JSON.parse(trimmed);
    return value !== null && typeof value === 'object' ? value : undefined;
  } catch {
    return undefined;
  }
};

/** A value as a container: a string holding a JSON object or array becomes it; anything else stays as it is. */
export const openJsonText = (value: unknown): unknown => (typeof value === 'string' ? (jsonContainerIn(value) ?? value) : value);
