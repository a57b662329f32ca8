import { describe, expect, it } from 'vitest';
import { createRuntimeKeys } from '../../src/admin/api-keys.js';
import { createMemoryStore } from '../../src/store/memory.js';

const creator = Object.freeze({ tenant: 'acme', user: 'root', roles: Object.freeze(['admin']), claims: Object.freeze({}) });

describe('runtime API keys', () => {
  it('holds the per-tenant cap under concurrent creates (check-then-create race)', async () => {
    const keys = createRuntimeKeys({ store: createMemoryStore(), maxPerTenant: () => 2 });
    const outcomes = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => keys.create(creator, { user: `bot${i}`, roles: [] })));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled').length).toBeLessThanOrEqual(2);
    expect((await keys.list('acme')).length).toBeLessThanOrEqual(2);
    // Withdrawn keys leave nothing behind: one by one, the tenant fills up to exactly the cap.
    while ((await keys.list('acme')).length < 2) await keys.create(creator, { user: 'next', roles: [] });
    await expect(keys.create(creator, { user: 'over', roles: [] })).rejects.toMatchObject({ code: 'LIMIT' });
  });
});
