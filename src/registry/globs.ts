import picomatch from 'picomatch';

export type NameMatcher = (name: string) => boolean;

const NEVER: NameMatcher = () => false;

/** Compiles tool-name globs (`*`, `write_*`, `{a,b}`) into one matcher. Names never contain `/`, so `*` spans the whole name. */
export function compileGlobs(patterns: readonly string[] | undefined): NameMatcher {
  if (!patterns || patterns.length === 0) return NEVER;
  if (patterns.includes('*')) return () => true;
  const matchers = patterns.map((pattern) => picomatch(pattern, { dot: true, nocase: false }));
  return (name) => matchers.some((match) => match(name));
}
