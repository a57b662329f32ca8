import { describe, expect, it } from 'vitest';
import { CompactTenantsBuilder } from '../../../src/config/compact-tenants.js';
import { openCompactTenants } from '../../../src/config/load.js';
import { checkTenantsInChild, type CheckSettings } from '../../../src/snapshot/check-in-child.js';

// The start's check of many distinct file tenants in a child process (src/snapshot/check-in-child.ts): it compiles what
// it can with stand-in services, leaves Cedar and custom policies to the caller, and stops at the first bad tenant.
const settings: CheckSettings = {
  policiesModule: new URL('../../../policies/index.js', import.meta.url).href,
  baseDir: process.cwd(),
  guardrails: undefined,
  auditEnabled: false,
  onStoreUnavailable: undefined,
};

function table(tenants: Array<[string, unknown]>) {
  const builder = new CompactTenantsBuilder();
  for (const [id, tenant] of tenants) builder.add(id, JSON.stringify(tenant), undefined);
  return openCompactTenants(builder.build());
}

const limited = (i: number) => ({ policies: { 'rate-limit': { limit: 100 + i, windowMs: 60000 } } });

describe('the start check in a child process', () => {
  it('compiles every tenant there and leaves Cedar and custom policies to the caller', async () => {
    const compact = table([
      ['a', limited(0)],
      ['b', { cedar: { policies: 'permit(principal, action, resource);' } }],
      ['c', limited(1)],
      ['d', { policies: { custom: [{ module: './nowhere.js', before: 'access' }] } }],
      ['e', limited(2)],
    ]);
    await expect(checkTenantsInChild(compact, settings)).resolves.toEqual({ inCaller: [1, 3], failedAt: -1 });
  });

  it('answers the first tenant whose compile fails, and nothing past it', async () => {
    const compact = table([
      ['a', limited(0)],
      ['b', { cedar: { policies: 'permit(principal, action, resource);' } }],
      ['c', { policies: { 'rate-limit': { limt: 5 } } }],
      ['d', { cedar: { policies: 'permit(principal, action, resource);' } }],
      ['e', { policies: { retry: { jitter: true } } }],
    ]);
    await expect(checkTenantsInChild(compact, settings)).resolves.toEqual({ inCaller: [1], failedAt: 2 });
  });

  it('skips a tenant whose text an earlier one shares', async () => {
    const bad = { policies: { 'rate-limit': { limt: 5 } } };
    const compact = table([
      ['a', limited(0)],
      ['b', limited(0)],
      ['c', bad],
      ['d', bad],
    ]);
    await expect(checkTenantsInChild(compact, settings)).resolves.toEqual({ inCaller: [], failedAt: 2 });
  });

  it('answers nothing when the child cannot check (the caller then checks every tenant)', async () => {
    const compact = table([['a', limited(0)]]);
    await expect(checkTenantsInChild(compact, { ...settings, policiesModule: new URL('./no-such-policies.js', import.meta.url).href })).resolves.toBeUndefined();
  });
});
