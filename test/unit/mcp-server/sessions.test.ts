import { describe, expect, it } from 'vitest';
import { createMcpSessions } from '../../../src/mcp-server/sessions.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import type { Principal } from '../../../src/types.js';

const principal = (tenant: string, user: string): Principal => ({ tenant, user, roles: [], claims: {} });
const limits = { idleTimeoutMs: 60_000, maxPerPrincipal: 2, maxPerTenant: 3 };

describe('MCP session records', () => {
  it('forget a session once it went unused for idleTimeoutMs, and keep one that is used', async () => {
    let now = 1_000_000;
    const sessions = createMcpSessions(createMemoryStore({ now: () => now }), () => now);
    const alice = principal('acme', 'alice');
    const used = (await sessions.create(alice, undefined, limits)).id;
    const idle = (await sessions.create(alice, undefined, limits)).id;
    now += 40_000;
    expect(await sessions.resume(alice, used, undefined, limits)).toBe(true);
    now += 40_000;
    expect(await sessions.resume(alice, used, undefined, limits)).toBe(true);
    expect(await sessions.resume(alice, idle, undefined, limits)).toBe(false);
  });

  it("refuse a new session beyond the tenant's bound instead of ending another user's", async () => {
    const sessions = createMcpSessions(createMemoryStore());
    const users = ['alice', 'bob', 'carol'].map((user) => principal('acme', user));
    const ids = [];
    for (const user of users) ids.push((await sessions.create(user, undefined, limits)).id);
    await expect(sessions.create(principal('acme', 'dave'), undefined, limits)).rejects.toMatchObject({ code: 'TG_OVERLOADED', statusCode: 503 });
    for (const [i, user] of users.entries()) expect(await sessions.resume(user, ids[i]!, undefined, limits)).toBe(true);
    // Another tenant's bound is its own.
    expect((await sessions.create(principal('globex', 'dave'), undefined, limits)).id).toMatch(/^[A-Za-z0-9_-]{32}$/);
  });

  it("end only the principal's own oldest session when it is at its own bound", async () => {
    let now = 0;
    const sessions = createMcpSessions(createMemoryStore({ now: () => now }), () => now);
    const alice = principal('acme', 'alice');
    const first = (await sessions.create(alice, undefined, limits)).id;
    now += 1;
    const second = (await sessions.create(alice, undefined, limits)).id;
    now += 1;
    const third = await sessions.create(alice, undefined, limits);
    expect(third.ended).toEqual([first]);
    expect(await sessions.resume(alice, first, undefined, limits)).toBe(false);
    expect(await sessions.resume(alice, second, undefined, limits)).toBe(true);
  });

  it('find nothing for another principal, another endpoint or a malformed id, and let only the owner end it', async () => {
    const sessions = createMcpSessions(createMemoryStore());
    const alice = principal('acme', 'alice');
    const { id } = await sessions.create(alice, 'echoes', limits);
    expect(await sessions.resume(principal('acme', 'bob'), id, 'echoes', limits)).toBe(false);
    expect(await sessions.resume(principal('globex', 'alice'), id, 'echoes', limits)).toBe(false);
    expect(await sessions.resume(alice, id, undefined, limits)).toBe(false);
    expect(await sessions.resume(alice, `${id}*`, 'echoes', limits)).toBe(false);
    expect(await sessions.end(principal('acme', 'bob'), id, 'echoes')).toBe(false);
    expect(await sessions.end(alice, id, 'echoes')).toBe(true);
    expect(await sessions.resume(alice, id, 'echoes', limits)).toBe(false);
  });
});
