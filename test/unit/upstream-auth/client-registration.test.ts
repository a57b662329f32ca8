import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../../src/store/memory.js';
import { registeredClient } from '../../../src/upstream-auth/client-registration.js';
import { createVault } from '../../../src/upstream-auth/vault.js';

const keys = (id: string) => ({ keys: [{ id, key: randomBytes(32).toString('base64') }] });
const scope = { service: 'notes', issuer: 'https://idp.test', timeoutMs: 500 };

describe('registered upstream clients', () => {
  it('registers once, keeps the secret sealed, and registers anew when the sealing key was removed', async () => {
    const store = createMemoryStore();
    let vault = createVault(keys('k1'));
    let count = 0;
    const register = async () => ({ clientId: `client-${++count}`, clientSecret: `secret-${count}` });
    const deps = { store, vault: () => vault };
    expect(await registeredClient(deps, scope, register)).toEqual({ clientId: 'client-1', clientSecret: 'secret-1' });
    expect(await registeredClient(deps, scope, register)).toEqual({ clientId: 'client-1', clientSecret: 'secret-1' });
    expect(count).toBe(1);
    expect(JSON.stringify(await store.scan('upstream-client:'))).not.toContain('secret-1');
    // Key rotated out: the record no longer opens, so the client is registered again instead of failing forever.
    vault = createVault(keys('k2'));
    expect(await registeredClient(deps, scope, register)).toEqual({ clientId: 'client-2', clientSecret: 'secret-2' });
  });
});
