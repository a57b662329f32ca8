import { describe, expect, it } from 'vitest';
import { validateConfigObject } from '../../../src/config/load.js';
import { CatalogRateLimited } from '../../../src/catalog/resource-catalog-errors.js';
import { admit, createCatalogGovernance, type CatalogCaller } from '../../../src/catalog/resource-catalog-governance.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import type { StateStore } from '../../../src/store/types.js';
import { storeUnavailable } from '../../../src/store/unavailable.js';

const config = validateConfigObject({ tenants: { t: { policies: { 'rate-limit': { limit: 1, per: 'user' } } } } }, process.cwd(), undefined).tenants.t!;
const off = { enabled: false, write() {}, async flush() {}, async close() {} };

function caller(store: StateStore, onStoreUnavailable?: 'fail-open' | 'fail-closed'): CatalogCaller {
  return { principal: { tenant: 't', user: 'u', roles: [], claims: {} }, requestId: 'r', via: 'rest', governance: createCatalogGovernance({ audit: off, store, onStoreUnavailable }) };
}

describe("a read or get under the tenant's rate limit while the state store does not answer", () => {
  const down: StateStore = {
    ...createMemoryStore(),
    hitWindow: async () => {
      throw storeUnavailable('hitWindow', new Error('connection refused'));
    },
  };

  it('is refused with a one-second wait by default (fail-closed), as a tool call would be', async () => {
    const refused = await admit(caller(down), config, 'resource').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(CatalogRateLimited);
    expect(refused).toMatchObject({ retryAfterMs: 1000, message: expect.stringMatching(/state store is unavailable/) });
  });

  it('is admitted uncounted with store.onUnavailable: fail-open', async () => {
    await expect(admit(caller(down, 'fail-open'), config, 'prompt')).resolves.toBeUndefined();
  });

  it('counts reads and gets per user in one window when the store answers', async () => {
    const store = createMemoryStore();
    await admit(caller(store), config, 'resource');
    await expect(admit(caller(store), config, 'prompt')).rejects.toBeInstanceOf(CatalogRateLimited);
  });
});
