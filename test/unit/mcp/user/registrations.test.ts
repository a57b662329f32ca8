import { describe, expect, it } from 'vitest';
import { createUserMcpRegistrations, registrationView } from '../../../../src/mcp/user/registrations.js';
import { createMemoryStore } from '../../../../src/store/memory.js';
import { createTestStore } from '../../../helpers/memory-store.js';

const DNS: Record<string, string[]> = { 'mcp.example.test': ['93.184.216.34'], 'internal.test': ['10.0.0.5'] };
function setup(maxServers = 3) {
  const store = createTestStore();
  let tick = 0;
  const registrations = createUserMcpRegistrations({
    store,
    egress: { allow: [], resolve: async (host) => DNS[host] ?? [] },
    maxServers: () => maxServers,
    now: () => new Date(Date.UTC(2025, 0, 1, 0, 0, tick++)),
  });
  return { store, registrations };
}
const URL_OK = 'https://mcp.example.test/mcp';

describe('user-level MCP registrations', () => {
  it('stores per tenant and raw sub, URL-encoded, and lists back only that user\'s servers', async () => {
    const { store, registrations } = setup();
    await registrations.put('acme', 'alice', 'notes', { url: URL_OK });
    await registrations.put('acme', 'a/b', 'notes', { url: URL_OK });
    await registrations.put('acme', 'alice/x', 'notes', { url: URL_OK });
    await registrations.put('other', 'alice', 'cal', { url: URL_OK });
    expect([...store.data.keys()].sort()).toEqual([
      'user-mcp/acme/a%2Fb',
      'user-mcp/acme/alice',
      'user-mcp/acme/alice%2Fx',
      'user-mcp/other/alice',
    ]);
    expect((await registrations.list('acme', 'alice')).map((r) => r.serviceId)).toEqual(['notes']);
    expect((await registrations.list('other', 'alice')).map((r) => r.serviceId)).toEqual(['cal']);
    expect(await registrations.list('acme', 'a')).toEqual([]);
    expect(await registrations.get('acme', 'alice', 'cal')).toBeUndefined();
  });

  it('keeps the per-user limit under concurrent registrations (one compare-and-set record per user)', async () => {
    const { registrations } = setup();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => registrations.put('acme', 'racer', `svc-${i}`, { url: URL_OK })),
    );
    const accepted = results.filter((result) => result.ok).length;
    expect(accepted).toBe(3);
    expect((await registrations.list('acme', 'racer'))).toHaveLength(3);
    expect(results.filter((result) => !result.ok && result.code === 'TG_CONFLICT')).toHaveLength(5);
  });

  it('keeps two subs that share a hashed key apart (keyed by raw sub, not userKey)', async () => {
    const { registrations } = setup();
    await registrations.put('acme', 'user@x', 'a', { url: URL_OK });
    expect(await registrations.list('acme', 'user@y')).toEqual([]);
  });

  it('validates serviceId, url, transport and headers', async () => {
    const { registrations } = setup();
    expect(await registrations.put('acme', 'alice', 'bad_id', { url: URL_OK })).toMatchObject({ ok: false, code: 'TG_BAD_REQUEST' });
    expect(await registrations.put('acme', 'alice', 'x'.repeat(33), { url: URL_OK })).toMatchObject({ ok: false });
    expect(await registrations.put('acme', 'alice', 'a', { url: 42 })).toMatchObject({ ok: false, code: 'TG_BAD_REQUEST' });
    expect(await registrations.put('acme', 'alice', 'a', { url: URL_OK, transport: 'stdio' })).toMatchObject({ ok: false, code: 'TG_BAD_REQUEST' });
    for (const headers of [[], 'x', { Host: 'a' }, { 'X-Toolgate-Depth': '0' }, { 'bad name': 'a' }, { A: 'line\r\nbreak' }, { A: 1 }]) {
      expect(await registrations.put('acme', 'alice', 'a', { url: URL_OK, headers })).toMatchObject({ ok: false, code: 'TG_BAD_REQUEST' });
    }
    expect(await registrations.list('acme', 'alice')).toEqual([]);
  });

  it('refuses URLs the egress policy refuses', async () => {
    const { registrations } = setup();
    for (const url of ['http://127.0.0.1/', 'http://[::1]/', 'http://169.254.169.254/', 'http://internal.test/', 'file:///etc/passwd', 'gopher://x/']) {
      expect(await registrations.put('acme', 'alice', 'a', { url })).toMatchObject({ ok: false, code: 'TG_EGRESS_DENIED' });
    }
  });

  it('enforces the per-user limit but allows replacing an existing server, keeping createdAt', async () => {
    const { registrations } = setup(2);
    const first = await registrations.put('acme', 'alice', 'a', { url: URL_OK });
    await registrations.put('acme', 'alice', 'b', { url: URL_OK });
    expect(await registrations.put('acme', 'alice', 'c', { url: URL_OK })).toMatchObject({ ok: false, code: 'TG_CONFLICT' });
    const replaced = await registrations.put('acme', 'alice', 'a', { url: `${URL_OK}2`, transport: 'sse' });
    expect(replaced).toMatchObject({ ok: true, created: false, registration: { transport: 'sse' } });
    if (first.ok && replaced.ok) expect(replaced.registration.createdAt).toBe(first.registration.createdAt);
    expect(await registrations.put('acme', 'bob', 'c', { url: URL_OK })).toMatchObject({ ok: true, created: true });
    expect(await registrations.delete('acme', 'alice', 'b')).toBe(true);
    expect(await registrations.delete('acme', 'alice', 'b')).toBe(false);
  });

  it('never lists header values back, and a __proto__ header stays a plain key', async () => {
    const { registrations } = setup();
    const headers = JSON.parse('{"Authorization":"Bearer s3cret","__proto__":"x"}') as Record<string, string>;
    const put = await registrations.put('acme', 'alice', 'a', { url: URL_OK, headers });
    expect(put.ok).toBe(true);
    const stored = await registrations.get('acme', 'alice', 'a');
    expect(stored?.headers.Authorization).toBe('Bearer s3cret');
    expect(Object.getPrototypeOf(stored?.headers)).toBe(Object.prototype);
    const view = registrationView('alice', stored!);
    expect(view).toEqual({
      serviceId: 'a',
      serviceKey: 'user_alice_service_a',
      url: URL_OK,
      transport: 'streamable-http',
      headerNames: ['Authorization', '__proto__'],
      createdAt: stored!.createdAt,
    });
    expect(JSON.stringify(view)).not.toContain('s3cret');
  });

  it('lists a user\'s registrations per tenant, after a put and after a delete, over the memory store', async () => {
    const registrations = createUserMcpRegistrations({ store: createMemoryStore(), egress: { allow: [], resolve: async (host) => DNS[host] ?? [] }, maxServers: () => 3 });
    expect(await registrations.list('acme', 'alice')).toEqual([]);
    await registrations.put('acme', 'alice', 'notes', { url: URL_OK });
    expect((await registrations.list('acme', 'alice')).map((r) => r.serviceId)).toEqual(['notes']);
    expect(await registrations.list('acme', 'bob')).toEqual([]);
    expect(await registrations.list('other', 'alice')).toEqual([]);
    await registrations.delete('acme', 'alice', 'notes');
    expect(await registrations.list('acme', 'alice')).toEqual([]);
  });
});
