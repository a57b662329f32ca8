import { describe, expect, it } from 'vitest';
import { bearerToken } from '../../../src/plugins/auth.js';

// The rule the header parser implements, as the regex it replaced on the hot path.
const RULE = /^Bearer ([^\s]+)$/i;

describe('bearerToken', () => {
  it('takes the token of `Bearer <token>`, the scheme in any case', () => {
    expect(bearerToken('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(bearerToken('bearer abc')).toBe('abc');
    expect(bearerToken('BEARER abc')).toBe('abc');
  });

  it('refuses a missing token, another scheme, extra or odd whitespace and control characters', () => {
    for (const header of [undefined, '', 'Bearer', 'Bearer ', 'Bearer  abc', 'Bearer abc ', 'Bearer a b', 'Bearer\tabc', 'Basic abc', 'Bearerabc', ' Bearer abc', 'Bearer abc\n', 'Bearer ab\u00a0c', 'Token abc']) {
      expect(bearerToken(header), JSON.stringify(header)).toBeUndefined();
    }
  });

  it('agrees with the regex rule on every header of a generated set', () => {
    const parts = ['Bearer', 'bearer', 'BeArEr', 'Basic', 'Bearer ', ' ', '  ', '\t', 'abc', 'a.b.c', '\u2028', 'x y', ''];
    for (const a of parts) for (const b of parts) for (const c of parts) {
      const header = a + b + c;
      expect(bearerToken(header), JSON.stringify(header)).toBe(RULE.exec(header)?.[1]);
    }
  });
});
