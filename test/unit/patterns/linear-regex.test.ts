import { describe, expect, it } from 'vitest';
import { compileLinear, isRefusal, MatchBudgetError, MAX_MATCH_WORK, MAX_PATTERN_LENGTH, MAX_PROGRAM_SIZE, programSizeBound, type LinearRegex } from '../../../src/patterns/linear-regex.js';

const compiled = (source: string): LinearRegex => {
  const result = compileLinear(source);
  if (isRefusal(result)) throw new Error(`refused: ${result.reason}`);
  return result;
};
const reasonFor = (source: string): string => {
  const result = compileLinear(source);
  if (!isRefusal(result)) throw new Error(`accepted: ${source}`);
  return result.reason;
};

describe('the linear-time engine for patterns from outside the code', () => {
  it('accepts and rejects like the pattern says (unanchored, as RegExp.test)', () => {
    const cases: Array<[string, string, boolean]> = [
      ['^\\d{4}-\\d{2}-\\d{2}$', '2026-12-02', true],
      ['^\\d{4}-\\d{2}-\\d{2}$', '2026-12-2', false],
      ['^[a-z0-9_-]{3,16}$', 'tool_gate', true],
      ['^[a-z0-9_-]{3,16}$', 'Tool', false],
      ['ab+c', 'xxabbbcxx', true],
      ['^\\u00e9t\\u00e9$', 'été', true],
      ['^\\u{1F600}$', '😀', true],
      ['^(?<year>\\d{4})$', '2026', true],
      ['^\\p{Lu}', 'Éa', true],
      ['^\\p{Lu}', 'éa', false],
      ['^a\\/b$', 'a/b', true],
    ];
    for (const [pattern, input, expected] of cases) expect(compiled(pattern).test(input), `${pattern} on ${input}`).toBe(expected);
  });

  it('runs the patterns that backtrack exponentially elsewhere in linear time', () => {
    for (const [pattern, input] of [['^(a+)+$', `${'a'.repeat(5000)}!`], ['^(\\w|\\d)*$', `${'1'.repeat(5000)}!`], ['^(a|aa)*$', `${'a'.repeat(5000)}!`]] as const) {
      const started = performance.now();
      expect(compiled(pattern).test(input)).toBe(false);
      // A generous bound, not a benchmark: the backtracking engine needs longer than the universe has.
      expect(performance.now() - started).toBeLessThan(1000);
    }
  });

  it('refuses what RE2 cannot run, saying why', () => {
    expect(reasonFor('(a)\\1')).toMatch(/^the linear-time regex engine \(RE2\) cannot run it: invalid escape sequence: `\\1`/);
    expect(reasonFor('^(?=.*\\d).{8,}$')).toMatch(/cannot run it: invalid or unsupported Perl syntax: `\(\?=`/);
    expect(reasonFor('(?<!a)b')).toMatch(/cannot run it/);
    // re2js would read a named backreference as literal text: refused instead of changing what it accepts.
    expect(reasonFor('(?<n>a)\\k<n>')).toMatch(/cannot run it: backreferences/);
    expect(compiled('a\\\\k').test('a\\k')).toBe(true); // an escaped backslash before k is not one
    expect(reasonFor('([')).toMatch(/cannot run it: missing closing \]/);
  });

  it('bounds the pattern: its length, and how far its repeats expand (refused before compiling)', () => {
    expect(reasonFor('a'.repeat(MAX_PATTERN_LENGTH + 1))).toBe(`the pattern is longer than ${MAX_PATTERN_LENGTH} characters`);
    const expanding = `(?:${'abcdefghij'.repeat(99)}){1000}`; // ~1,000,000 instructions when compiled
    const started = performance.now();
    expect(reasonFor(expanding)).toMatch(/too complex/);
    expect(performance.now() - started).toBeLessThan(100);
    expect(reasonFor('(?:.*a.*){1000}')).toMatch(/too complex/);
    expect(programSizeBound('(?:a{30}){30}')).toBeGreaterThan(900);
  });

  it('never counts a program smaller than RE2 compiles it', () => {
    for (const pattern of ['^(a+)+$', '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', '(a|b|c){5,10}', '((ab){3}c){4}', 'x{2,}', '[\\p{L}\\p{N}]{100}', '(?:.*a.*){100}']) {
      expect(programSizeBound(pattern), pattern).toBeGreaterThanOrEqual(compiled(pattern).programSize);
    }
    expect(MAX_PROGRAM_SIZE).toBeGreaterThan(1000);
  });

  it('refuses a match that would cost more than its budget, instead of running it', () => {
    const simple = compiled('^[a-z]+$');
    const longest = Math.floor(MAX_MATCH_WORK / simple.programSize) - 1;
    expect(simple.test('a'.repeat(longest))).toBe(true);
    expect(() => simple.test('a'.repeat(longest + 1))).toThrow(MatchBudgetError);
    expect(() => simple.test('a'.repeat(longest + 1))).toThrow(`too long to check against the pattern "^[a-z]+$" (at most ${longest})`);
  });

  it('gives each pattern its own toString (ajv keys its compiled patterns by it)', () => {
    expect(String(compiled('^a$'))).not.toBe(String(compiled('^b$')));
  });
});
