import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/shared/canonical-json.js';

describe('canonicalJson', () => {
  it('sorts keys at every level and matches JSON.stringify otherwise', () => {
    const value = { b: [3, { z: 1, a: null }], a: 'x', c: { y: true, x: 1.5 }, u: undefined, s: 'é"\n' };
    expect(canonicalJson(value)).toBe('{"a":"x","b":[3,{"a":null,"z":1}],"c":{"x":1.5,"y":true},"s":"é\\"\\n"}');
    expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
  });

  it('gives equal text for equal values built in different key orders', () => {
    expect(canonicalJson({ a: 1, b: { c: 2, d: [1, 2] } })).toBe(canonicalJson({ b: { d: [1, 2], c: 2 }, a: 1 }));
  });

  it('handles arrays with undefined, dates and primitives like JSON.stringify', () => {
    expect(canonicalJson([undefined, () => 1, new Date(0)])).toBe(JSON.stringify([undefined, () => 1, new Date(0)]));
    expect(canonicalJson('s')).toBe('"s"');
    expect(canonicalJson(undefined)).toBe('null');
  });
});

// The reference: keys sorted at each object, every time (no cache). The real one caches sorted key layouts
// (bounded), and must write exactly this text for any value, whichever layouts are cached.
function reference(value: unknown): string {
  const write = (item: unknown): string | undefined => {
    if (item === null || typeof item !== 'object') return JSON.stringify(item);
    if (typeof (item as { toJSON?: unknown }).toJSON === 'function') return write((item as { toJSON(): unknown }).toJSON());
    if (Array.isArray(item)) return `[${item.map((element) => write(element) ?? 'null').join(',')}]`;
    const record = item as Record<string, unknown>;
    const parts = Object.keys(record).sort().flatMap((key) => {
      const text = write(record[key]);
      return text === undefined ? [] : [`${JSON.stringify(key)}:${text}`];
    });
    return `{${parts.join(',')}}`;
  };
  return write(value) ?? 'null';
}

describe('canonicalJson with cached layouts', () => {
  it('writes what sorted copies would, for keys that collide when joined and past the cache bound', () => {
    const values: unknown[] = [
      { 'a\u0000b': 1, c: 2 },
      { a: 1, 'b\u0000c': 2 },
      { a: 1, 'b\u0000c': { 'a\u0000b': [1, { c: 3 }] } },
      { '10': 'x', '2': 'y', b: NaN, a: -0, z: Infinity, f: () => 1, s: Symbol('s') },
      { when: new Date(0), nested: [undefined, null, { y: 1, x: [{}] }] },
      { 'é': 1, e: 2, E: 3, '\u{1F600}': 4, 'ￚ': 5 },
    ];
    for (let layout = 0; layout < 600; layout += 1) values.push({ [`k${layout}`]: layout, [`a${layout % 7}`]: { z: layout, y: [layout] } });
    values.push({ ['x'.repeat(600)]: 1, a: 2 }, Object.fromEntries(Array.from({ length: 40 }, (_, index) => [`key${39 - index}`, index])));
    for (let round = 0; round < 2; round += 1) for (const value of values) expect(canonicalJson(value)).toBe(reference(value));
  });
});
