// The one engine for every regular expression that comes from outside the code (tool schemas of any
// source, glob arguments): re2js, a pure-JS port of RE2, whose matching time is linear in the input and
// never backtracks (docs/security-model.md#untrusted-patterns-and-schemas). Linear has a constant: the
// size of the compiled program. So a pattern is bounded before it is compiled (its length and an upper
// bound of its program size), and every match is bounded by its work (program size × input length).
import { LRUCache } from 'lru-cache';
import { RE2JS } from 're2js';

/** Longer patterns are refused before anything else is done with them. */
export const MAX_PATTERN_LENGTH = 1000;
/** RE2 instructions a pattern may compile to (re2js spends some tens of µs per instruction compiling). */
export const MAX_PROGRAM_SIZE = 2000;
/**
 * Program size × input length one match may cost. re2js's slowest path (its NFA, on an ambiguous pattern)
 * was measured at about 0.5 µs per instruction per character, so one match stays near 0.1 s of the loop.
 */
export const MAX_MATCH_WORK = 250_000;

export type PatternRefusal = { ok: false; reason: string };

export interface LinearRegex {
  readonly source: string;
  readonly programSize: number;
  /** Unanchored search, like RegExp.prototype.test. Throws MatchBudgetError past MAX_MATCH_WORK. */
  test(input: string): boolean;
  /**
   * The first match at or after `from` as [start, end) offsets, or undefined. Bounded like `test` (by the
   * whole input's length): callers with long texts search bounded windows (src/guardrails/).
   */
  find(input: string, from?: number): { start: number; end: number } | undefined;
}

/** A match that would cost more than MAX_MATCH_WORK: refused, never run. */
export class MatchBudgetError extends Error {
  constructor(readonly pattern: string, readonly inputLength: number, readonly maxLength: number) {
    super(`a value of ${inputLength} characters is too long to check against the pattern ${JSON.stringify(pattern)} (at most ${maxLength})`);
    this.name = 'MatchBudgetError';
  }
}

const REPEAT = /\{(\d{1,7})(,(\d{0,7}))?\}/y;

/** Index of the last character of the escape starting at `i` (a backslash). */
function escapeEnd(source: string, i: number): number {
  const next = source[i + 1];
  if ((next === 'p' || next === 'P' || next === 'x') && source[i + 2] === '{') {
    const close = source.indexOf('}', i + 3);
    return close < 0 ? source.length - 1 : close;
  }
  return Math.min(i + 1, source.length - 1);
}

/** Index of the `]` closing the class that opens at `i`, or -1 when it is not closed. */
function classEnd(source: string, i: number): number {
  let j = i + 1;
  if (source[j] === '^') j += 1;
  if (source[j] === ']') j += 1; // a leading `]` is literal
  for (; j < source.length; j += 1) {
    const c = source[j];
    if (c === '\\') j = escapeEnd(source, j);
    else if (c === '[' && source[j + 1] === ':') {
      const close = source.indexOf(':]', j + 2);
      if (close >= 0) j = close + 1;
    } else if (c === ']') return j;
  }
  return -1;
}

/**
 * An upper bound of the RE2 program a pattern compiles to, read from its text alone so that a costly
 * pattern is refused before it is compiled: each atom and class costs 1, a group its contents plus its
 * capture, and a counted repeat multiplies what it repeats (RE2 writes `x{n,m}` out as m copies of x).
 * It over-counts freely; it never under-counts what RE2 emits.
 */
export function programSizeBound(source: string): number {
  type Frame = { total: number; last: number };
  const stack: Frame[] = [{ total: 3, last: 0 }]; // 3: the program's start, fail and match
  let top = stack[0]!;
  const add = (cost: number) => {
    top.total += cost;
    top.last = cost;
  };
  for (let i = 0; i < source.length; i += 1) {
    const c = source[i];
    if (c === '\\') {
      i = escapeEnd(source, i);
      add(1);
    } else if (c === '[') {
      const end = classEnd(source, i);
      if (end > 0) i = end;
      add(1);
    } else if (c === '(') {
      stack.push((top = { total: 2, last: 0 }));
    } else if (c === ')' && stack.length > 1) {
      const group = stack.pop()!;
      top = stack[stack.length - 1]!;
      add(group.total);
    } else if (c === '|') {
      top.total += 1;
      top.last = 0;
    } else if (c === '*' || c === '+' || c === '?') {
      top.total += 1;
      top.last += 1;
    } else if (c === '{') {
      REPEAT.lastIndex = i;
      const repeat = REPEAT.exec(source);
      if (!repeat) {
        add(1);
        continue;
      }
      const min = Number(repeat[1]);
      const count = Math.max(1, repeat[3] ? Number(repeat[3]) : repeat[2] !== undefined ? min + 1 : min);
      top.total += top.last * (count - 1) + count;
      top.last *= count;
      i += repeat[0].length - 1;
    } else {
      add(1);
    }
    if (top.total > MAX_PROGRAM_SIZE * 100) return Number.POSITIVE_INFINITY; // far past any bound: stop counting
  }
  return stack.reduce((sum, frame) => sum + frame.total, 0);
}

function hasNamedBackreference(source: string): boolean {
  for (let i = 0; i < source.length - 1; i += 1) {
    if (source[i] !== '\\') continue;
    if (source[i + 1] === 'k') return true;
    i += 1; // an escaped character, e.g. the second backslash of `\\k`
  }
  return false;
}

class Re2Regex implements LinearRegex {
  constructor(
    readonly source: string,
    private readonly compiled: RE2JS,
    readonly programSize: number,
  ) {}

  test(input: string): boolean {
    if (this.programSize * (input.length + 1) > MAX_MATCH_WORK) throw new MatchBudgetError(this.source, input.length, Math.floor(MAX_MATCH_WORK / this.programSize) - 1);
    return this.compiled.test(input);
  }

  find(input: string, from = 0): { start: number; end: number } | undefined {
    if (this.programSize * (input.length + 1) > MAX_MATCH_WORK) throw new MatchBudgetError(this.source, input.length, Math.floor(MAX_MATCH_WORK / this.programSize) - 1);
    const matcher = this.compiled.matcher(input);
    return matcher.find(from) ? { start: matcher.start(), end: matcher.end() } : undefined;
  }

  /** ajv keys its compiled patterns by toString(): one per source. */
  toString(): string {
    return `re2:${this.source}`;
  }
}

/** Compiled patterns by source (and refusals): schemas and globs repeat the same few patterns. */
const cache = new LRUCache<string, LinearRegex | PatternRefusal>({ max: 1000 });

function remember<T extends LinearRegex | PatternRefusal>(source: string, result: T): T {
  cache.set(source, result);
  return result;
}

function compileNow(source: string, syntax: 'ecmascript' | 're2'): LinearRegex | PatternRefusal {
  if (source.length > MAX_PATTERN_LENGTH) return { ok: false, reason: `the pattern is longer than ${MAX_PATTERN_LENGTH} characters` };
  // JSON Schema patterns are ECMAScript regexes: re2js translates the spellings RE2 writes differently
  // (\u{…}, (?<name>…)); what RE2 cannot run at all (look-around, backreferences) fails to compile below.
  // re2js would translate a named backreference into literal text, which would change what the pattern accepts.
  if (syntax === 'ecmascript' && hasNamedBackreference(source)) return { ok: false, reason: 'the linear-time regex engine (RE2) cannot run it: backreferences (\\k<name>) are not supported' };
  let re2Source: string;
  try {
    re2Source = syntax === 'ecmascript' ? RE2JS.translateRegExp(source) : source;
  } catch (error) {
    return { ok: false, reason: `the pattern is not valid: ${(error as Error).message}` };
  }
  const bound = programSizeBound(re2Source);
  if (bound > MAX_PROGRAM_SIZE) return { ok: false, reason: `the pattern is too complex (its repeats expand past ${MAX_PROGRAM_SIZE} steps)` };
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(re2Source);
  } catch (error) {
    return { ok: false, reason: `the linear-time regex engine (RE2) cannot run it: ${(error as Error).message.replace(/^error parsing regexp: /, '')}` };
  }
  const programSize = compiled.programSize();
  if (programSize > MAX_PROGRAM_SIZE) return { ok: false, reason: `the pattern is too complex (${programSize} steps, at most ${MAX_PROGRAM_SIZE})` };
  return new Re2Regex(source, compiled, programSize);
}

/**
 * Compiles a pattern from outside the code for the linear-time engine, or says why it cannot be used.
 * `ecmascript` (the default) reads it in JavaScript's dialect (JSON Schema `pattern`); `re2` as RE2 syntax.
 */
export function compileLinear(source: string, syntax: 'ecmascript' | 're2' = 'ecmascript'): LinearRegex | PatternRefusal {
  const key = `${syntax}\u0000${source}`;
  return cache.get(key) ?? remember(key, compileNow(source, syntax));
}

export const isRefusal = (result: LinearRegex | PatternRefusal): result is PatternRefusal => 'ok' in result;
