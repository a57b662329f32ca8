import { describe, expect, it } from 'vitest';
import { applyMergePatch } from '../../../src/tenants/merge-patch.js';

describe('JSON Merge Patch (RFC 7396)', () => {
  it('answers the examples of RFC 7396 appendix A', () => {
    const cases: Array<[unknown, unknown, unknown]> = [
      [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
      [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
      [{ a: 'b' }, { a: null }, {}],
      [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
      [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
      [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
      [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
      [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
      [['a', 'b'], ['c', 'd'], ['c', 'd']],
      [{ a: 'b' }, ['c'], ['c']],
      [{ a: 'foo' }, null, null],
      [{ a: 'foo' }, 'bar', 'bar'],
      [{ e: null }, { a: 1 }, { e: null, a: 1 }],
      [[1, 2], { a: 'b', c: null }, { a: 'b' }],
      [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
    ];
    for (const [target, patch, result] of cases) expect(applyMergePatch(target, patch), JSON.stringify([target, patch])).toEqual(result);
  });

  it('leaves the target unchanged and never writes a prototype', () => {
    const target = { tools: { deny: ['a'] } };
    const patch = JSON.parse('{"__proto__": {"polluted": true}, "tools": {"deny": ["b"]}}') as unknown;
    const merged = applyMergePatch(target, patch) as Record<string, unknown>;
    expect(target).toEqual({ tools: { deny: ['a'] } });
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.hasOwn(merged, '__proto__')).toBe(true);
    expect(merged.tools).toEqual({ deny: ['b'] });
  });
});
