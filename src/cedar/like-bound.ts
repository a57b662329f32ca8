// `like` is the one Cedar operator whose cost per call the policy text multiplies: matching a pattern against a
// string takes up to their lengths' product (a leading `*` and a long literal retry at every position). At the
// other caps (262,144 characters, 200 policies, arguments of 8,192) one set of long patterns made every call
// take 2 s of event loop, so the patterns of a set are bounded together (docs/governance.md#what-is-cached).
import { MAX_LIKE_PATTERN_CHARS } from './limits.js';

/** Characters (wildcards included) of the `like` patterns in one policy, Cedar's JSON form. */
export function likePatternChars(node: unknown): number {
  if (node === null || typeof node !== 'object') return 0;
  let total = 0;
  if (Array.isArray(node)) {
    for (const item of node) total += likePatternChars(item);
    return total;
  }
  for (const [key, child] of Object.entries(node as Record<string, unknown>)) {
    const pattern = key === 'like' && child !== null && typeof child === 'object' ? (child as { pattern?: unknown }).pattern : undefined;
    if (Array.isArray(pattern)) total += pattern.length;
    total += likePatternChars(child);
  }
  return total;
}

/** Counts one policy's patterns into the set's total; says what is wrong once the total passes the cap. */
export function likeBudget(): (policy: unknown) => string | undefined {
  let used = 0;
  return (policy) => {
    used += likePatternChars(policy);
    return used > MAX_LIKE_PATTERN_CHARS
      ? `\`like\` patterns longer than ${MAX_LIKE_PATTERN_CHARS} characters in all (each is matched against strings of up to 8,192 characters at every call)`
      : undefined;
  };
}
