import { randomBytes } from 'node:crypto';
import type { McpServerConfig } from '../../config/types.js';
import { errors } from '../../errors.js';
import { sha256Hex } from '../../shared/canonical-json.js';
import { hashTag } from '../../store/hash-tag.js';
import type { LeaseRef, StateStore } from '../../store/types.js';
import type { Principal } from '../../call/principal.js';

/** What the store keeps of one MCP session; who owns it is its key, not a field that could be compared wrongly. */
interface SessionRecord {
  /** The toolset endpoint that created it (`/mcp/<toolset>`), null for `/mcp`: a session serves only there. */
  toolset: string | null;
}

// 192 random bits, base64url: unguessable, and safe in a header and a store key.
const SESSION_ID = /^[A-Za-z0-9_-]{32}$/;
const digest = (text: string): string => sha256Hex(text).slice(0, 32);
// Hash-tagged: a lease script touches the record and both groups, which a Cluster needs in one slot.
const tenantHash = (principal: Principal): string => hashTag(digest(principal.tenant));
const ownerHash = (principal: Principal): string => digest(`${principal.tenant}\u0000${principal.user}`);
/** The owner is part of the key: another principal's lookup of the same id reads another key, and finds nothing. */
const recordPrefix = (principal: Principal): string => `mcp-session:${tenantHash(principal)}:${ownerHash(principal)}:`;
/** The session ids counted against each bound (lease groups: sorted sets by expiry in Redis). */
const tenantGroup = (principal: Principal): string => `mcp-sessions-of:${tenantHash(principal)}`;
const ownerGroup = (principal: Principal): string => `mcp-sessions-of:${tenantHash(principal)}:${ownerHash(principal)}`;
// The value is the endpoint: a session presented at another endpoint does not match and is not touched.
const recordValue = (toolset: string | undefined): string => JSON.stringify({ toolset: toolset ?? null } satisfies SessionRecord);

/** Where a session's own side records live (e.g. the relays its client declared): under its owner's key. */
export const sessionSideKey = (principal: Principal, id: string, side: string): string => `${recordPrefix(principal)}${id}:${side}`;

/**
 * The side records kept with a session's lease: written by `initialize`, renewed with the session and gone
 * with it (expired, ended, or ended to make room for a newer one).
 */
const LEASED_SIDES = ['client'] as const;
export type LeasedSide = (typeof LEASED_SIDES)[number];
const sideSuffixes = LEASED_SIDES.map((side) => `:${side}`);
const EMPTY_SIDE = '[]';

export type SessionLimits = Pick<McpServerConfig, 'idleTimeoutMs' | 'maxPerPrincipal' | 'maxPerTenant'>;

export interface McpSessions {
  /**
   * A new session of `principal` at `toolset`. Beyond `maxPerPrincipal` the principal's least recently
   * used sessions end (returned in `ended`, so their streams and calls can be closed); beyond
   * `maxPerTenant` it throws TG_OVERLOADED rather than end another user's session.
   */
  create(principal: Principal, toolset: string | undefined, limits: SessionLimits, sides?: Partial<Record<LeasedSide, string>>): Promise<{ id: string; ended: string[] }>;
  /** True when `id` is a live session of this principal at this endpoint; its idle timer restarts. One store round trip. */
  resume(principal: Principal, id: string, toolset: string | undefined, limits: SessionLimits): Promise<boolean>;
  /** Ends the session; false when it was not this principal's live session. */
  end(principal: Principal, id: string, toolset: string | undefined): Promise<boolean>;
}

/**
 * MCP session records in the state store, so any replica can serve any session's requests. A record is
 * `mcp-session:{<tenant hash>}:<owner hash>:<id>` with the idle timeout as TTL: the same id presented with
 * another token looks up a key that does not exist, exactly like an id nobody issued (no oracle). The
 * bounds are counted in two lease groups (the tenant's and the owner's sessions), checked and added in
 * one atomic store operation whose cost is bounded by the bounds, not by the keyspace
 * (docs/architecture.md#mcp-sessions).
 */
export function createMcpSessions(store: StateStore): McpSessions {
  const ref = (principal: Principal, id: string, toolset: string | undefined, ttlMs: number): LeaseRef => ({
    id,
    record: { key: recordPrefix(principal) + id, value: recordValue(toolset) },
    groups: [ownerGroup(principal), tenantGroup(principal)],
    ttlMs,
    sides: sideSuffixes,
  });

  return {
    async create(principal, toolset, limits, sides = {}) {
      const id = randomBytes(24).toString('base64url');
      const grant = await store.acquireLease({
        id,
        record: { key: recordPrefix(principal) + id, value: recordValue(toolset) },
        ttlMs: limits.idleTimeoutMs,
        own: { key: ownerGroup(principal), limit: limits.maxPerPrincipal, recordPrefix: recordPrefix(principal) },
        shared: { key: tenantGroup(principal), limit: limits.maxPerTenant },
        // Every side is written (empty when not given), so the one lease script ends all of them alike.
        sides: Object.fromEntries(LEASED_SIDES.map((side) => [`:${side}`, sides[side] ?? EMPTY_SIDE])),
      });
      if (!grant.granted) throw new errors.TG_OVERLOADED(`tenant holds ${limits.maxPerTenant} MCP sessions; end one (DELETE /mcp) or retry later`);
      return { id, ended: grant.evicted };
    },
    async resume(principal, id, toolset, limits) {
      return SESSION_ID.test(id) && store.renewLease(ref(principal, id, toolset, limits.idleTimeoutMs));
    },
    async end(principal, id, toolset) {
      return SESSION_ID.test(id) && store.releaseLease(ref(principal, id, toolset, 0));
    },
  };
}
