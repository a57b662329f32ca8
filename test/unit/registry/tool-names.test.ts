import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { shortenName } from '../../../src/registry/tool-names.js';

const hash8 = (value: string): string => createHash('sha256').update(value).digest('hex').slice(0, 8);

describe('shortenName', () => {
  it('returns names within the limit unchanged', () => {
    expect(shortenName('a'.repeat(64))).toBe('a'.repeat(64));
  });

  it('keeps a prefix and appends the first 8 hex chars of the full name hash', () => {
    const long = 'a'.repeat(70);
    expect(shortenName(long)).toBe(`${'a'.repeat(55)}_${hash8(long)}`);
  });

  it('cuts at a fixed length whatever character ends the kept prefix', () => {
    const long = `${'a'.repeat(54)}_${'b'.repeat(20)}`;
    expect(shortenName(long)).toBe(`${'a'.repeat(54)}__${hash8(long)}`);
  });

  it('honours a custom maximum', () => {
    expect(shortenName('abcdefghijklmnop', 12)).toBe(`abc_${hash8('abcdefghijklmnop')}`);
  });
});
