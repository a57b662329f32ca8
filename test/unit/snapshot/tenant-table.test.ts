// TenantTable.get answers a repeated lookup of one tenant without the LRU (src/snapshot/tenant-table.ts): what it
// answers must stay what the LRU holds — an invalidated, evicted or recompiled tenant is seen at once.
import { describe, expect, it } from 'vitest';
import { validateConfigObject } from '../../../src/config/load.js';
import type { PolicyChain } from '../../../src/pipeline/chain.js';
import type { Catalog } from '../../../src/registry/catalog.js';
import type { TenantView } from '../../../src/registry/tenant-view.js';
import { TenantTable, type TenantParts } from '../../../src/snapshot/tenant-table.js';
import { silentLog } from '../../helpers/registry.js';

function table(compiledCacheSize: number): { table: TenantTable; compiles: string[] } {
  const config = validateConfigObject({ tenancy: { compiledCacheSize }, tenants: { acme: {}, globex: {} } }, process.cwd(), undefined);
  const compiles: string[] = [];
  const compile = async (id: string): Promise<TenantParts> => {
    compiles.push(id);
    return { view: { id } as unknown as TenantView, chain: {} as unknown as PolicyChain };
  };
  const deps = { log: silentLog, onShadowed: () => undefined, compile, loadStored: async () => undefined, storedRevision: async () => undefined };
  return { table: new TenantTable(config, {} as unknown as Catalog, deps), compiles };
}

describe('TenantTable.get', () => {
  it('answers a repeated lookup with the same compiled tenant, and forgets it when it is invalidated', async () => {
    const { table: tenants, compiles } = table(10);
    expect(tenants.get('acme')).toBeUndefined();
    const acme = await tenants.load('acme');
    expect(tenants.get('acme')).toBe(acme);
    expect(tenants.get('acme')).toBe(acme);
    tenants.invalidate('acme');
    expect(tenants.get('acme')).toBeUndefined();
    const again = await tenants.load('acme');
    expect(again).not.toBe(acme);
    expect(tenants.get('acme')).toBe(again);
    expect(compiles).toEqual(['acme', 'acme']);
  });

  it('sees an eviction by the bound at once, and a tenant carried into a derived table there', async () => {
    const { table: tenants } = table(1);
    const acme = await tenants.load('acme');
    expect(tenants.get('acme')).toBe(acme);
    const globex = await tenants.load('globex');
    expect(tenants.isCompiled('acme')).toBe(false);
    expect(tenants.get('acme')).toBeUndefined();
    expect(tenants.get('globex')).toBe(globex);
    const next = tenants.derive({} as unknown as Catalog);
    expect(next.get('globex')?.view).toBe(globex?.view);
    expect(tenants.get('globex')).toBe(globex);
  });
});
