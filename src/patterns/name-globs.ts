import { LRUCache } from 'lru-cache';
import { errors } from '../errors.js';
import { compileGlob } from './glob.js';
import { MatchBudgetError } from './linear-regex.js';

export type NameMatcher = (name: string) => boolean;

const NEVER: NameMatcher = () => false;

/** A glob with none of the engine's special characters matches only its own text. */
const LITERAL = /^[A-Za-z0-9_.-]+$/;

/**
 * Compiles the operator's name globs (`*`, `write_*`, `{a,b}`) into one matcher: the one engine every
 * operator glob goes through (tool access, toolsets, roles, overrides, OpenAPI filters, and the policies'
 * `tools` globs). Names never contain `/`, so `*` spans the whole name. The globs are trusted, but some
 * names they meet are not (an imported document's operationIds and tags), so they run on the linear-time
 * engine (docs/security-model.md#untrusted-patterns-and-schemas); a name too long to check matches nothing.
 * A glob the engine refuses throws, naming it (the caller says where it came from).
 */
export function compileGlobs(patterns: readonly string[] | undefined): NameMatcher {
  if (!patterns || patterns.length === 0) return NEVER;
  if (patterns.includes('*')) return ALWAYS;
  // A matcher is a pure function of its globs: tenants of one template share it instead of each holding a
  // copy (~0.5 KiB per distinct list: a set, an array and closures). Bounded, so evicted tenants' lists go too.
  const key = JSON.stringify(patterns);
  let matcher = compiled.get(key);
  if (!matcher) compiled.set(key, (matcher = compileUncached(patterns)));
  return matcher;
}

const ALWAYS: NameMatcher = () => true;
const compiled = new LRUCache<string, NameMatcher>({ max: 4096 });

function compileUncached(patterns: readonly string[]): NameMatcher {
  const literals = new Set(patterns.filter((pattern) => LITERAL.test(pattern)));
  const matchers = patterns
    .filter((pattern) => !literals.has(pattern))
    .map((pattern) => {
      const matcher = compileGlob(pattern);
      if (typeof matcher !== 'function') throw new Error(`the glob ${JSON.stringify(pattern)} cannot be used: ${matcher.reason}`);
      return matcher;
    });
  const matchesGlob = (name: string): boolean =>
    matchers.some((match) => {
      try {
        return match(name);
      } catch (error) {
        if (error instanceof MatchBudgetError) return false;
        throw error;
      }
    });
  if (matchers.length === 0) return (name) => literals.has(name);
  if (literals.size === 0) return matchesGlob;
  return (name) => literals.has(name) || matchesGlob(name);
}

/**
 * A policy's `tools` globs: a glob the engine refuses fails the configuration (TG_CONFIG_INVALID) with the
 * key named, when the chain is built, like any other bad option.
 */
export function compileOptionGlobs(key: string, patterns: readonly string[]): NameMatcher {
  try {
    return compileGlobs(patterns);
  } catch (error) {
    if (error instanceof Error && !(error instanceof MatchBudgetError)) throw new errors.TG_CONFIG_INVALID(`${key}: ${error.message}`);
    throw error;
  }
}
