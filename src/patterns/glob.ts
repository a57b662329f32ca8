// Globs from outside the code (the `glob` tool's pattern, `grep`'s include) compiled to RE2 syntax and run
// on the linear-time engine (docs/security-model.md#untrusted-patterns-and-schemas). picomatch compiles a
// glob to a backtracking JavaScript regex: `*a*a*a*a*a*ab` over a 100-character name held the loop for
// seconds. The syntax kept is picomatch's with `dot: true`: `*`, `?`, `**` segments, `[...]` classes,
// `{a,b}` alternatives, the `@ ? + *` extglobs, `\` escapes and a leading `!` negating the whole glob.
import { compileLinear, isRefusal, type LinearRegex, type PatternRefusal } from './linear-regex.js';

export type GlobMatcher = (path: string) => boolean;

class GlobSyntaxError extends Error {}

const quote = (c: string): string => (/[A-Za-z0-9_/]/.test(c) || c.charCodeAt(0) > 0x7f ? c : `\\${c}`);

/** Index of the bracket closing the one at `open`, skipping escapes and nested brackets; -1 if none. */
function closing(glob: string, open: number, opener: string, closer: string): number {
  let depth = 0;
  for (let i = open; i < glob.length; i += 1) {
    const c = glob[i];
    if (c === '\\') i += 1;
    else if (c === opener) depth += 1;
    else if (c === closer && --depth === 0) return i;
  }
  return -1;
}

/** Splits at the separator where it is not nested in brackets or escaped. */
function splitTopLevel(body: string, separator: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i += 1) {
    const c = body[i];
    if (c === '\\') i += 1;
    else if (c === '{' || c === '(' || c === '[') depth += 1;
    else if (c === '}' || c === ')' || c === ']') depth = Math.max(0, depth - 1);
    else if (c === separator && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(body.slice(start));
  return parts;
}

/** `[...]` → an RE2 class that never matches `/`; undefined when the bracket is not closed (a literal `[`). */
function translateClass(glob: string, open: number): { regex: string; end: number } | undefined {
  let i = open + 1;
  const negated = glob[i] === '!' || glob[i] === '^';
  if (negated) i += 1;
  let body = '';
  for (let first = true; i < glob.length; i += 1, first = false) {
    const c = glob[i]!;
    if (c === ']' && !first) return { regex: negated ? `[^/${body}]` : `[${body}]`, end: i };
    if (c === '\\' && i + 1 < glob.length) body += quote(glob[(i += 1)]!);
    else if (c === '[' && glob[i + 1] === ':') {
      const close = glob.indexOf(':]', i + 2);
      if (close < 0) return undefined;
      body += glob.slice(i, close + 2);
      i = close + 1;
    } else body += c === '-' ? '-' : quote(c);
  }
  return undefined;
}

/** One glob (no leading negation) → RE2 source, unanchored. */
function translate(glob: string): string {
  let out = '';
  for (let i = 0; i < glob.length; i += 1) {
    const c = glob[i]!;
    const atSegmentStart = i === 0 || glob[i - 1] === '/';
    if (c === '\\') {
      if (i + 1 < glob.length) out += quote(glob[(i += 1)]!);
      else out += '\\\\';
    } else if ('@?+*!'.includes(c) && glob[i + 1] === '(') {
      const end = closing(glob, i + 1, '(', ')');
      if (end < 0) throw new GlobSyntaxError(`unclosed "${c}(" in the glob`);
      if (c === '!') throw new GlobSyntaxError('"!(...)" (a negated extglob) needs look-ahead, which the linear-time engine does not run; use a narrower positive pattern');
      const alternatives = splitTopLevel(glob.slice(i + 2, end), '|').map(translate).join('|');
      out += `(?:${alternatives})${c === '@' ? '' : c}`;
      i = end;
    } else if (c === '*' && glob[i + 1] === '*' && atSegmentStart && (i + 2 === glob.length || glob[i + 2] === '/')) {
      // `**` as a whole segment: any number of segments. `a/**` also matches `a`, `**/b` also `b`.
      if (i + 2 === glob.length) {
        if (out.endsWith('/')) out = `${out.slice(0, -1)}(?:/.*)?`;
        else out += '.*';
        i += 1;
      } else {
        out += '(?:[^/]*/)*';
        i += 2;
      }
    } else if (c === '*') {
      while (glob[i + 1] === '*') i += 1;
      out += '[^/]*';
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '[') {
      const cls = translateClass(glob, i);
      if (cls) {
        out += cls.regex;
        i = cls.end;
      } else out += '\\[';
    } else if (c === '{') {
      const end = closing(glob, i, '{', '}');
      const alternatives = end < 0 ? [] : splitTopLevel(glob.slice(i + 1, end), ',');
      if (alternatives.length < 2) out += '\\{';
      else {
        out += `(?:${alternatives.map(translate).join('|')})`;
        i = end;
      }
    } else out += quote(c);
  }
  return out;
}

/** The glob's RE2 source (anchored) and whether a leading `!` negates it. */
export function globToRegex(glob: string): { source: string; negated: boolean } {
  let start = 0;
  while (glob[start] === '!' && glob[start + 1] !== '(') start += 1;
  return { source: `^${translate(glob.slice(start))}$`, negated: start % 2 === 1 };
}

/**
 * A matcher for one glob, or the reason it cannot be used. Every path it is asked about must fit the
 * match budget (paths are short; a glob too complex for a long path throws MatchBudgetError).
 */
export function compileGlob(glob: string): GlobMatcher | PatternRefusal {
  let translated: { source: string; negated: boolean };
  try {
    translated = globToRegex(glob);
  } catch (error) {
    if (error instanceof GlobSyntaxError) return { ok: false, reason: error.message };
    throw error;
  }
  const compiled: LinearRegex | PatternRefusal = compileLinear(translated.source, 're2');
  if (isRefusal(compiled)) return compiled;
  return translated.negated ? (path) => !compiled.test(path) : (path) => compiled.test(path);
}
