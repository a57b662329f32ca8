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
