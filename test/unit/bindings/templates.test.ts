import { describe, expect, it } from 'vitest';
import { applyBindings, resolveBindings } from '../../../src/bindings/templates.js';
import type { Principal } from '../../../src/call/principal.js';

const principal: Principal = {
  tenant: 'acme',
  user: 'alice',
  roles: [],
  claims: { department: 'sales', groups: ['a', 'b'], level: 3, org: { unit: 'emea' } },
};

describe('resolveBindings', () => {
  it('expands principal and claim templates inside nested objects and arrays', () => {
    const result = resolveBindings({ filter: { tenant: '${principal.tenant}', dept: '${claims.department}', tags: ['u-${principal.user}'] }, unit: '${claims.org.unit}' }, principal);
    expect(result).toEqual({ ok: true, value: { filter: { tenant: 'acme', dept: 'sales', tags: ['u-alice'] }, unit: 'emea' } });
  });

  it('keeps the claim type for whole-string templates and stringifies scalars inside text', () => {
    const result = resolveBindings({ groups: '${claims.groups}', level: '${claims.level}', label: 'L${claims.level}' }, principal);
    expect(result).toEqual({ ok: true, value: { groups: ['a', 'b'], level: 3, label: 'L3' } });
  });

  it('fails closed when a claim is missing instead of dropping the filter', () => {
    expect(resolveBindings({ filter: { dept: '${claims.region}' } }, principal)).toEqual({ ok: false, reason: 'the token has no claim region' });
  });

  it('never resolves prototype members as claims', () => {
    for (const name of ['__proto__', 'constructor', 'toString', 'org.constructor']) {
      expect(resolveBindings({ x: `\${claims.${name}}` }, principal).ok).toBe(false);
    }
  });

  it('refuses unknown templates and objects embedded in text', () => {
    expect(resolveBindings({ x: '${env:SECRET}' }, principal).ok).toBe(false);
    expect(resolveBindings({ x: 'org=${claims.org}' }, principal).ok).toBe(false);
  });

  it('keeps a __proto__ key as plain data', () => {
    const template = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    const result = resolveBindings(template, principal);
    expect(result.ok && Object.getPrototypeOf(result.value)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('applyBindings', () => {
  it('replaces the model value of a bound key whole and keeps the other arguments', () => {
    const merged = applyBindings({ query: 'q', filter: { tenant: 'globex', extra: 1 } }, { filter: { tenant: 'acme' } });
    expect(merged).toEqual({ query: 'q', filter: { tenant: 'acme' } });
  });

  it('never expands templates found in model arguments', () => {
    expect(applyBindings({ query: '${principal.tenant}' }, {})).toEqual({ query: '${principal.tenant}' });
  });
});
