import { hash } from 'node:crypto';
import type { Principal } from '../types.js';

interface Entry {
  principal: Principal;
  expiresAt: number;
}

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
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    // Re-insert to mark as most recently used.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.principal;
  }

  /** `tokenExpiresAt` in ms since epoch, or undefined for tokens without `exp` (API keys). */
  set(key: string, principal: Principal, tokenExpiresAt: number | undefined): void {
    if (this.max === 0 || this.ttlMs === 0) return;
    const expiresAt = Math.min(this.now() + this.ttlMs, tokenExpiresAt ?? Number.POSITIVE_INFINITY);
    if (expiresAt <= this.now()) return;
    this.entries.delete(key);
    this.entries.set(key, { principal, expiresAt });
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
