import { compileGlob } from '../patterns/glob.js';
import { MatchBudgetError } from '../patterns/linear-regex.js';

export type NameMatcher = (name: string) => boolean;

const NEVER: NameMatcher = () => false;

/**
 * Compiles the operator's name globs (`*`, `write_*`, `{a,b}`) into one matcher. Names never contain `/`, so
 * `*` spans the whole name. The globs are trusted, but some names they meet are not (an imported document's
 * operationIds and tags), so they run on the linear-time engine
 * (docs/security-model.md#untrusted-patterns-and-schemas); a name too long to check matches nothing.
 */
export function compileGlobs(patterns: readonly string[] | undefined): NameMatcher {
  if (!patterns || patterns.length === 0) return NEVER;
  if (patterns.includes('*')) return () => true;
  const matchers = patterns.map((pattern) => {
    const matcher = compileGlob(pattern);
    if (typeof matcher !== 'function') throw new Error(`the glob ${JSON.stringify(pattern)} cannot be used: ${matcher.reason}`);
    return matcher;
  });
  return (name) =>
    matchers.some((match) => {
      try {
        return match(name);
      } catch (error) {
        if (error instanceof MatchBudgetError) return false;
        throw error;
      }
    });
}
