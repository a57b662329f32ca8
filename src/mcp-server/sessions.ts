import { createHash, randomBytes } from 'node:crypto';
import type { McpServerConfig } from '../config/types.js';
import { errors } from '../errors.js';
import type { StateStore } from '../store/types.js';
import type { Principal } from '../types.js';

/** What the store keeps of one MCP session; who owns it is its key, not a field that could be compared wrongly. */
interface SessionRecord {
  /** The toolset endpoint that created it (`/mcp/<toolset>`), null for `/mcp`: a session serves only there. */
  toolset: string | null;
  createdAt: number;
}

const PREFIX = 'mcp-session:';
// 192 random bits, base64url: unguessable, and safe in a header and a store key.
const SESSION_ID = /^[A-Za-z0-9_-]{32}$/;
const digest = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 32);
const tenantPrefix = (tenant: string): string => `${PREFIX}${digest(tenant)}:`;
/** The owner is part of the key: another principal's lookup of the same id reads another key, and finds nothing. */
const ownerPrefix = (principal: Principal): string => `${tenantPrefix(principal.tenant)}${digest(`${principal.tenant}\u0000${principal.user}`)}:`;

export type SessionLimits = Pick<McpServerConfig, 'idleTimeoutMs' | 'maxPerPrincipal' | 'maxPerTenant'>;

export interface McpSessions {
  /**
   * A new session of `principal` at `toolset`. Beyond `maxPerPrincipal` the principal's oldest sessions
   * end (returned in `ended`, so their streams and calls can be closed); beyond `maxPerTenant` it throws
   * TG_OVERLOADED rather than end another user's session.
   */
  create(principal: Principal, toolset: string | undefined, limits: SessionLimits): Promise<{ id: string; ended: string[] }>;
  /** True when `id` is a live session of this principal at this endpoint; its idle timer restarts. */
  resume(principal: Principal, id: string, toolset: string | undefined, limits: SessionLimits): Promise<boolean>;
  /** Ends the session; false when it was not this principal's live session. */
  end(principal: Principal, id: string, toolset: string | undefined): Promise<boolean>;
}

/**
 * MCP session records in the state store, so any replica can serve any session's requests. Keys are
 * `mcp-session:<tenant hash>:<owner hash>:<id>` with the idle timeout as TTL: the same id presented with
 * another token looks up a key that does not exist, exactly like an id nobody issued (no oracle), and the
 * per-tenant and per-principal counts are prefix scans.
 */
export function createMcpSessions(store: StateStore, now: () => number = Date.now): McpSessions {
  const keyOf = (principal: Principal, id: string): string => ownerPrefix(principal) + id;
  const owned = async (principal: Principal, id: string, toolset: string | undefined): Promise<{ key: string; raw: string } | undefined> => {
    if (!SESSION_ID.test(id)) return undefined;
    const key = keyOf(principal, id);
    const raw = await store.get(key);
    if (raw === null) return undefined;
    const record = JSON.parse(raw) as SessionRecord;
    return record.toolset === (toolset ?? null) ? { key, raw } : undefined;
  };

  return {
    async create(principal, toolset, limits) {
      const mine = await store.scan(ownerPrefix(principal));
      const ended: string[] = [];
      if (mine.length >= limits.maxPerPrincipal) {
        const oldestFirst = mine
          .map(({ key, value }) => ({ key, createdAt: (JSON.parse(value) as SessionRecord).createdAt }))
          .sort((a, b) => a.createdAt - b.createdAt);
        for (const { key } of oldestFirst.slice(0, mine.length - limits.maxPerPrincipal + 1)) {
          if (await store.delete(key)) ended.push(key.slice(ownerPrefix(principal).length));
        }
      } else if ((await store.scan(tenantPrefix(principal.tenant))).length >= limits.maxPerTenant) {
        throw new errors.TG_OVERLOADED(`tenant holds ${limits.maxPerTenant} MCP sessions; end one (DELETE /mcp) or retry later`);
      }
      const id = randomBytes(24).toString('base64url');
      const record: SessionRecord = { toolset: toolset ?? null, createdAt: now() };
      await store.set(keyOf(principal, id), JSON.stringify(record), { ttlMs: limits.idleTimeoutMs });
      return { id, ended };
    },
    async resume(principal, id, toolset, limits) {
      const found = await owned(principal, id, toolset);
      // Rewriting the same value restarts its TTL; false when it expired or ended in between.
      return found !== undefined && store.compareAndSet(found.key, found.raw, found.raw, { ttlMs: limits.idleTimeoutMs });
    },
    async end(principal, id, toolset) {
      const found = await owned(principal, id, toolset);
      return found !== undefined && store.delete(found.key);
    },
  };
}
