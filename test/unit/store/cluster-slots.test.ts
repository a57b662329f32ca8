// The key layout on a Redis Cluster (docs/architecture.md#state-store): every store operation that
// touches several keys in one command or script keeps them in one hash slot, computed with the same
// public function ioredis routes by (cluster-key-slot), so a layout change that would answer CROSSSLOT on
// a Cluster fails here, without one. And the tags stay small: one tenant's other keys still spread.
import clusterKeySlot from 'cluster-key-slot';
import { describe, expect, it } from 'vitest';
import { createRuntimeKeys } from '../../../src/admin/api-keys.js';
import { createApprovalService } from '../../../src/approvals/service.js';
import { createMcpSessions } from '../../../src/mcp/server/sessions.js';
import { createWindowLimit } from '../../../src/rate-limit/window-limit.js';
import { hashTag } from '../../../src/store/hash-tag.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import type { StateStore } from '../../../src/store/types.js';
import type { Principal } from '../../../src/call/principal.js';

const PREFIXES = ['toolgate:', '', 'team-a:prod:'];
// Hostile names: braces (a tag of their own), separators, non-ASCII.
const TENANTS = ['acme', '{acme}', 'a}b{c', 'x:y', 'ünï'];
const USERS = ['alice', '{alice}', '}{', 'bob:1'];
const principal = (tenant: string, user: string): Principal => ({ tenant, user, roles: [], claims: {} });
const limits = { idleTimeoutMs: 60_000, maxPerPrincipal: 2, maxPerTenant: 50 };

/** The keys of every multi-key store call, as the Redis store sends them (prefix + key). */
function recordingMultiKeyCalls(inner: StateStore, prefix: string): { store: StateStore; calls: Array<{ method: string; keys: string[] }> } {
  const calls: Array<{ method: string; keys: string[] }> = [];
  const note = (method: string, keys: string[]): void => void calls.push({ method, keys: keys.map((key) => prefix + key) });
  const store: StateStore = {
    ...inner,
    async acquireLease(lease) {
      const grant = await inner.acquireLease(lease);
      // The script also deletes the records of the leases it ends: `own.recordPrefix` + id.
      const ended = grant.granted ? grant.evicted : [];
      note('acquireLease', [lease.record.key, lease.own.key, lease.shared.key, ...[...ended, 'any-id'].map((id) => lease.own.recordPrefix + id)]);
      return grant;
    },
    async renewLease(lease) {
      note('renewLease', [lease.record.key, ...lease.groups]);
      return inner.renewLease(lease);
    },
    async releaseLease(lease) {
      note('releaseLease', [lease.record.key, ...lease.groups]);
      return inner.releaseLease(lease);
    },
  };
  return { store, calls };
}

describe('the key layout on a Redis Cluster', () => {
  it.each(PREFIXES)('keeps every key of each MCP session lease script in one slot (prefix %j)', async (prefix) => {
    const { store, calls } = recordingMultiKeyCalls(createMemoryStore(), prefix);
    const sessions = createMcpSessions(store);
    for (const tenant of TENANTS) {
      for (const user of USERS) {
        const who = principal(tenant, user);
        // Three sessions at a bound of two: the third create ends the first (an eviction in the script).
        const ids = [];
        for (let i = 0; i < 3; i += 1) ids.push((await sessions.create(who, i === 0 ? undefined : 'docs', limits)).id);
        await sessions.resume(who, ids[2]!, 'docs', limits);
        await sessions.end(who, ids[2]!, 'docs');
      }
    }
    expect(calls.map((call) => call.method)).toEqual(expect.arrayContaining(['acquireLease', 'renewLease', 'releaseLease']));
    const crossSlot = calls.filter((call) => clusterKeySlot.generateMulti(call.keys) === -1);
    expect(crossSlot).toEqual([]);
  });

  it.each(PREFIXES)('keeps every key of the runtime-key count (create, cap refusal, cascade revoke) in one slot (prefix %j)', async (prefix) => {
    const { store, calls } = recordingMultiKeyCalls(createMemoryStore(), prefix);
    const keys = createRuntimeKeys({ store, maxPerTenant: () => 2, apiKeyLive: () => true });
    for (const tenant of TENANTS) {
      const admin: Principal = { ...principal(tenant, 'root'), roles: ['admin'], credential: { kind: 'apiKey', id: 'ci', sha256: 'a'.repeat(64) } };
      const first = await keys.create(admin, { user: 'bot', roles: ['admin'] });
      const deputy = await keys.verify(first.key);
      await keys.create(deputy!, { user: 'bot2', roles: [] });
      await expect(keys.create(admin, { user: 'over', roles: [] })).rejects.toMatchObject({ code: 'LIMIT' });
      // Revoking the first key also revokes the one it minted: both uncounted.
      await keys.revoke(tenant, first.record.id);
      expect(await keys.list(tenant)).toHaveLength(0);
    }
    expect(calls.map((call) => call.method)).toEqual(expect.arrayContaining(['acquireLease', 'releaseLease']));
    const crossSlot = calls.filter((call) => clusterKeySlot.generateMulti(call.keys) === -1);
    expect(crossSlot).toEqual([]);
  });

  it.each(PREFIXES)('keeps every key of the pending-approval count (create, refusal, decision) in one slot (prefix %j)', async (prefix) => {
    const { store, calls } = recordingMultiKeyCalls(createMemoryStore(), prefix);
    const approvals = createApprovalService({ store });
    const bounds = { maxPendingPerUser: 1, maxPendingPerTenant: 10, maxArgumentsBytes: 1000 };
    for (const tenant of TENANTS) {
      for (const user of USERS) {
        const ask = () => approvals.create({ principal: principal(tenant, user), call: { name: 't', arguments: {}, callId: 'c', source: 'function' }, requestId: 'r', depth: 0, expiresMs: 60_000, bounds });
        const record = await ask();
        await expect(ask()).rejects.toMatchObject({ code: 'TOO_MANY' });
        await approvals.deny(record.id, { ...principal(tenant, 'decider'), roles: ['approver'] });
      }
    }
    expect(calls.map((call) => call.method)).toEqual(expect.arrayContaining(['acquireLease', 'releaseLease']));
    const crossSlot = calls.filter((call) => clusterKeySlot.generateMulti(call.keys) === -1);
    expect(crossSlot).toEqual([]);
  });

  it("puts different tenants' sessions in different slots, so tenants spread over masters", async () => {
    const { store, calls } = recordingMultiKeyCalls(createMemoryStore(), 'toolgate:');
    const sessions = createMcpSessions(store);
    for (let i = 0; i < 64; i += 1) await sessions.create(principal(`tenant-${i}`, 'u'), undefined, limits);
    const slots = new Set(calls.map((call) => clusterKeySlot(call.keys[0]!)));
    expect(slots.size).toBeGreaterThan(48);
  });

  it("spreads one tenant's rate-limit windows over every third of the slot range (a 3-master Cluster's shards)", () => {
    const limit = createWindowLimit({ limit: 10, windowMs: 60_000, per: 'user', tools: ['*'] }, undefined);
    const thirds = new Set<number>();
    for (let i = 0; i < 30; i += 1) thirds.add(Math.floor(clusterKeySlot(`toolgate:${limit.key(principal('acme', `user-${i}`), 'tool')}`) / (16384 / 3)));
    expect([...thirds].sort()).toEqual([0, 1, 2]);
  });

  it('builds hash tags only from text without braces', () => {
    expect(hashTag('abc')).toBe('{abc}');
    expect(clusterKeySlot(`p:x:${hashTag('abc')}:1`)).toBe(clusterKeySlot(`q:${hashTag('abc')}`));
    expect(() => hashTag('a}b')).toThrow();
    expect(() => hashTag('')).toThrow();
  });
});
