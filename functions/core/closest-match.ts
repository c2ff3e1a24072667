/** Edit distance (insertions, deletions, substitutions), stopping early once it exceeds `max`. */
export function editDistance(a: string, b: string, max = Number.POSITIVE_INFINITY): number {
  if (a === b) return 0;
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + cost);
      current.push(value);
      if (value < rowMin) rowMin = value;
    }
    if (rowMin > max) return max + 1;
    previous = current;
  }
  return previous[b.length] as number;
}

/** Largest distance at which two words still look like a typo of each other. */
const allowedDistance = (word: string, candidate: string): number => {
  const length = Math.max(word.length, candidate.length);
  if (length <= 3) return Math.min(1, word.length - 1);
  return Math.max(1, Math.floor(length * 0.4));
};

/**
 * The candidate closest to `word` (case-insensitive edit distance), or undefined when none is close
 * enough to be a plausible typo. Ties go to the earlier candidate.
 */
export function closestMatch(word: string, candidates: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    if (candidate === word) return candidate;
    const limit = allowedDistance(lower, candidate);
    const distance = editDistance(lower, candidate.toLowerCase(), Math.min(limit, bestDistance));
    if (distance <= limit && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** "Did you mean 'x'? " for the closest candidate, or '' when none is close (the start of a hint). */
export const didYouMean = (word: string, candidates: readonly string[]): string => {
  const close = closestMatch(word, candidates);
  return close === undefined ? '' : `Did you mean '${close}'? `;
};
