import { describe, expect, it } from 'vitest';
import { validateTenantObject } from '../../../src/config/load.js';
import { wideningKeys, within } from '../../../src/tenants/narrowing.js';
import { testConfig } from '../../helpers/build.js';

const config = testConfig();
const tenant = (raw: Record<string, unknown>) => validateTenantObject('t', raw, config);
const base = tenant({ tools: { allow: ['*'], deny: ['bash'] }, roles: { viewer: { deny: ['write_*'] } }, limits: { maxInFlight: 8 }, mode: 'default' });

describe('what a tenant admin may change', () => {
  it('accepts changes that only narrow: fewer or narrower allow globs, more or wider deny globs, lower bounds, readonly', () => {
    for (const raw of [
      { tools: { allow: ['get_*', 'search_docs'], deny: ['bash'] } },
      { tools: { allow: ['*'], deny: ['bash', 'delete_*'] } },
      { tools: { allow: ['*'], deny: ['*'] } },
      { tools: { allow: ['*'], deny: ['bash'] }, limits: { maxInFlight: 2 }, mode: 'readonly' },
      { tools: { allow: ['*'], deny: ['bash'] }, roles: { viewer: { deny: ['write_*', 'create_*'] }, guest: { allow: ['get_*'] } } },
    ]) {
      expect(wideningKeys(base, tenant({ roles: { viewer: { deny: ['write_*'] } }, limits: { maxInFlight: 8 }, ...raw })), JSON.stringify(raw)).toEqual([]);
    }
  });

  it('refuses every change that could widen, naming its key, and any change to policies, bindings or toolsets', () => {
    const same = { tools: { allow: ['*'], deny: ['bash'] }, roles: { viewer: { deny: ['write_*'] } }, limits: { maxInFlight: 8 } };
    expect(wideningKeys(base, tenant({ ...same, tools: { allow: ['*'], deny: [] } }))).toEqual(['tools/deny']);
    expect(wideningKeys(base, tenant({ ...same, tools: { allow: ['*'], deny: ['bas*'] } }))).toEqual([]);
    expect(wideningKeys(base, tenant({ ...same, limits: { maxInFlight: 9 } }))).toEqual(['limits/maxInFlight']);
    expect(wideningKeys(base, tenant({ ...same, roles: {} }))).toEqual(['roles/viewer']);
    expect(wideningKeys(base, tenant({ ...same, userMcp: { maxServers: 11 } }))).toEqual(['userMcp/maxServers']);
    expect(wideningKeys(base, tenant({ ...same, mcp: { relay: { sampling: true } } }))).toEqual(['mcp/relay']);
    expect(wideningKeys(base, tenant({ ...same, policies: { 'rate-limit': { limit: 1, windowMs: 1000 } } }))).toEqual(['policies']);
    expect(wideningKeys(base, tenant({ ...same, bindings: { x: { a: 1 } } }))).toEqual(['bindings']);
    const narrow = tenant({ ...same, tools: { allow: ['get_*'], deny: ['bash'] }, mode: 'readonly' });
    expect(wideningKeys(narrow, tenant({ ...same, tools: { allow: ['get_*', 'put_*'], deny: ['bash'] }, mode: 'readonly' }))).toEqual(['tools/allow']);
    expect(wideningKeys(narrow, tenant({ ...same, tools: { allow: ['g*'], deny: ['bash'] }, mode: 'readonly' }))).toEqual(['tools/allow']);
    expect(wideningKeys(narrow, tenant({ ...same, tools: { allow: ['get_*'], deny: ['bash'] } }))).toEqual(['mode']);
  });

  it('reads a glob as within another only when that is certain', () => {
    expect(within('get_weather', 'get_*')).toBe(true);
    expect(within('get_*', '*')).toBe(true);
    expect(within('get_[ab]*', 'get_*')).toBe(true);
    expect(within('get_*', 'get_weather')).toBe(false);
    expect(within('*get', 'get*')).toBe(false);
    expect(within('ge?_x', 'get_*')).toBe(false);
    expect(within('get_x', '[g]et_*')).toBe(false);
  });
});
