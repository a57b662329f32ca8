import { describe, expect, it } from 'vitest';
import { jsonSizeUpTo } from '../../../src/shared/json-size.js';

const exact = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');

describe('jsonSizeUpTo', () => {
  it.each([
    ['an empty object', {}],
    ['nested values', { a: [1, 2.5, -3e-7, null, true, false, 'x'], b: { c: {}, d: [] }, 'k"ey': 'v\\al' }],
    ['escapes and control characters', { s: 'line\nbreak\ttab "quoted" \\ back \u0001 \u001f \b \f \r' }],
    ['non-ASCII and surrogate pairs', { s: 'ünïcødé 日本 😀', t: ['€'] }],
    ['a lone surrogate', { s: 'a\ud800b\udc00' }],
    ['undefined members', { a: undefined, b: [undefined, 1] }],
    ['non-finite numbers', [Number.NaN, Number.POSITIVE_INFINITY]],
  ])('counts %s exactly as JSON.stringify writes them', (_name, value) => {
    expect(jsonSizeUpTo(value, 1_000_000)).toBe(exact(value));
  });

  it('stops counting past the limit', () => {
    const big = { title: 'x'.repeat(1_000_000) };
    expect(jsonSizeUpTo(big, 64)).toBeGreaterThan(64);
    expect(jsonSizeUpTo({ items: Array.from({ length: 100_000 }, () => 'abc') }, 100)).toBeGreaterThan(100);
  });
});
