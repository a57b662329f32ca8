import { describe, expect, it } from 'vitest';
import { ToolError } from '../../../src/call/tool-error.js';
import { matchesFilter, requireBoundFilter } from '../../../src/rag/filter.js';

function refusal(value: unknown, required: string[] = ['tenant']): ToolError {
  try {
    requireBoundFilter(value, required);
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    return error as ToolError;
  }
  throw new Error('expected a refusal');
}

describe('requireBoundFilter', () => {
  it('accepts scalars and lists of scalars and returns a frozen copy', () => {
    const input = { tenant: 'acme', level: 3, public: true, department: ['hr', 'finance'] };
    const filter = requireBoundFilter(input, ['tenant']);
    expect({ ...filter }).toEqual(input);
    input.tenant = 'globex';
    expect(filter.tenant).toBe('acme');
    expect(Object.isFrozen(filter)).toBe(true);
  });

  it.each([
    ['missing', undefined],
    ['null', null],
    ['a string', 'tenant=acme'],
    ['an array', [{ tenant: 'acme' }]],
    ['a class instance', new Map([['tenant', 'acme']])],
    ['a nested object value', { tenant: { $ne: 'x' } }],
    ['a null value', { tenant: null }],
    ['a NaN value', { tenant: Number.NaN }],
    ['a list holding an object', { tenant: ['acme', {}] }],
    ['an unresolved template', { tenant: '${principal.tenant}' }],
    ['an unresolved template in a list', { tenant: ['acme', '${claims.x}'] }],
    ['a filter without a bound key', { department: 'hr' }],
  ])('refuses %s with PERMISSION_DENIED', (_label, value) => {
    expect(refusal(value).errorType).toBe('PERMISSION_DENIED');
  });

  it('treats a JSON "__proto__" key as an ordinary key, not a prototype', () => {
    const parsed: unknown = JSON.parse('{"tenant":"acme","__proto__":{"tenant":"globex"}}');
    expect(refusal(parsed).errorType).toBe('PERMISSION_DENIED');
    const withScalar: unknown = JSON.parse('{"tenant":"acme","__proto__":"x"}');
    const filter = requireBoundFilter(withScalar, ['tenant']);
    expect(Object.keys(filter)).toEqual(['tenant', '__proto__']);
    expect(matchesFilter({ tenant: 'acme' }, filter)).toBe(false);
  });

  it('accepts an empty filter only when the tool binds no keys', () => {
    expect(Object.keys(requireBoundFilter({}, []))).toEqual([]);
    expect(refusal({}).errorType).toBe('PERMISSION_DENIED');
  });
});

describe('matchesFilter', () => {
  it('needs every key to match', () => {
    expect(matchesFilter({ tenant: 'acme', department: 'hr' }, { tenant: 'acme', department: 'hr' })).toBe(true);
    expect(matchesFilter({ tenant: 'acme', department: 'hr' }, { tenant: 'acme', department: 'finance' })).toBe(false);
  });

  it('never matches a document that lacks a filtered key', () => {
    expect(matchesFilter({ tenant: 'acme' }, { tenant: 'acme', department: 'hr' })).toBe(false);
  });

  it('does not find filtered keys on the prototype chain', () => {
    expect(matchesFilter({}, { toString: 'x' })).toBe(false);
    expect(matchesFilter(Object.create({ tenant: 'acme' }) as Record<string, unknown>, { tenant: 'acme' })).toBe(false);
  });

  it('reads a list in the filter as any-of and a list in the document as any of its values', () => {
    expect(matchesFilter({ department: 'hr' }, { department: ['finance', 'hr'] })).toBe(true);
    expect(matchesFilter({ department: ['hr', 'legal'] }, { department: 'legal' })).toBe(true);
    expect(matchesFilter({ department: ['hr', 'legal'] }, { department: 'finance' })).toBe(false);
  });

  it('compares strictly without coercion', () => {
    expect(matchesFilter({ level: '1' }, { level: 1 })).toBe(false);
    expect(matchesFilter({ tenant: 'Acme' }, { tenant: 'acme' })).toBe(false);
  });
});
