import { hash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Principal } from '../call/principal.js';

/**
 * A bounded LRU of verified tokens (lru-cache). Keys are SHA-256 digests (raw tokens never sit in memory
 * longer than a request); an entry never outlives the token's own `exp`. Failures are never cached.
 */
export class TokenCache {
  private readonly entries: LRUCache<string, Principal> | undefined;

  constructor(
    max: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    // The cache reads the same clock as `set` computes lifetimes with, so an entry's `exp` is exact.
    this.entries = max > 0 && ttlMs > 0 ? new LRUCache({ max, ttl: ttlMs, ttlResolution: 0, perf: { now } }) : undefined;
  }

  static keyOf(token: string): string {
    // One-shot crypto.hash: no Hash object per request (this runs on every authenticated request).
    return hash('sha256', token, 'base64url');
  }

  get(key: string): Principal | undefined {
    return this.entries?.get(key);
  }

  /** `tokenExpiresAt` in ms since epoch, or undefined for tokens without `exp` (API keys). */
  set(key: string, principal: Principal, tokenExpiresAt: number | undefined): void {
    if (!this.entries) return;
    // lru-cache serves an entry while its age is at most `ttl`: one less, so it is gone at `exp` itself.
    const ttl = Math.min(this.ttlMs, (tokenExpiresAt ?? Number.POSITIVE_INFINITY) - this.now()) - 1;
    // A ttl of 0 would mean "never expires" to lru-cache: a token this close to `exp` is not kept at all.
    if (ttl >= 1) this.entries.set(key, principal, { ttl });
  }

  get size(): number {
    return this.entries?.size ?? 0;
  }

  clear(): void {
    this.entries?.clear();
  }
}
