import { hash } from 'node:crypto';
import type { Principal } from '../types.js';

interface Entry {
  principal: Principal;
  expiresAt: number;
  /** When the entry last moved to the recent end of the LRU order. */
  touchedAt: number;
}

// A hit moves its entry to the recent end at most this often: re-inserting on every request cost a Map
// delete and set per request, and a token used within the last second is recent enough for eviction order.
const TOUCH_INTERVAL_MS = 1000;

/**
 * A bounded LRU of verified tokens. Keys are SHA-256 digests (raw tokens never sit in memory longer
 * than a request); an entry never outlives the token's own `exp`. Failures are never cached.
 */
export class TokenCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly max: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  static keyOf(token: string): string {
    // One-shot crypto.hash: no Hash object per request (this runs on every authenticated request).
    return hash('sha256', token, 'base64url');
  }

  get(key: string): Principal | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    const now = this.now();
    if (entry.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    if (now - entry.touchedAt >= TOUCH_INTERVAL_MS) {
      // Re-insert to mark as most recently used.
      entry.touchedAt = now;
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry.principal;
  }

  /** `tokenExpiresAt` in ms since epoch, or undefined for tokens without `exp` (API keys). */
  set(key: string, principal: Principal, tokenExpiresAt: number | undefined): void {
    if (this.max === 0 || this.ttlMs === 0) return;
    const now = this.now();
    const expiresAt = Math.min(now + this.ttlMs, tokenExpiresAt ?? Number.POSITIVE_INFINITY);
    if (expiresAt <= now) return;
    this.entries.delete(key);
    this.entries.set(key, { principal, expiresAt, touchedAt: now });
    while (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }
}
