// Access tokens held in process memory until shortly before they expire, fetched once however many calls
// wait for the same key (single flight). Bounded: past `max` keys the least recently used goes. The bound,
// the lifetimes and the single flight are lru-cache's `fetch`.
import { LRUCache } from 'lru-cache';
import type { TokenSet } from './auth-server.js';

/** A token is renewed this long before its `exp` (a call must not set out with a token about to lapse). */
export const EARLY_RENEWAL_MS = 30_000;
/** A token whose server gave no lifetime is reused this long. */
const UNDATED_TTL_MS = 60_000;

export function freshUntil(token: Pick<TokenSet, 'expiresAt'>, fetchedAt: number): number {
  return token.expiresAt === undefined ? fetchedAt + UNDATED_TTL_MS : token.expiresAt - EARLY_RENEWAL_MS;
}

interface Fetch {
  fetchToken: () => Promise<TokenSet>;
  capAt: number;
  /** Set by the fetch: false when the token must not be kept (it is already within its renewal margin). */
  keep?: boolean;
}

export class AccessTokenCache {
  private readonly entries: LRUCache<string, TokenSet, Fetch>;

  constructor(max: number, now: () => number = Date.now) {
    this.entries = new LRUCache<string, TokenSet, Fetch>({
      max: Math.max(1, max),
      // The cache reads the same clock as the lifetimes are computed with, on every check.
      ttlResolution: 0,
      perf: { now },
      // A fetch whose key was pushed out meanwhile (more keys fetching at once than `max`) still answers its
      // callers: the token was granted; it is only not kept.
      ignoreFetchAbort: true,
      fetchMethod: async (_key, _stale, { options, context }) => {
        const token = await context.fetchToken();
        const fetchedAt = now();
        // lru-cache serves an entry while its age is at most `ttl`: one less, so it is gone at `until` itself.
        const ttl = Math.min(freshUntil(token, fetchedAt), context.capAt) - fetchedAt - 1;
        context.keep = ttl >= 1 && max > 0;
        // A ttl of 0 would mean "never expires" to lru-cache; a token not kept is deleted once fetched.
        options.ttl = context.keep ? ttl : 1;
        return token;
      },
    });
  }

  /** `capAt`: never keep the token past this time (the subject token's own expiry). */
  async get(key: string, fetchToken: () => Promise<TokenSet>, capAt = Number.POSITIVE_INFINITY): Promise<{ token: TokenSet; cached: boolean }> {
    const status: LRUCache.Status<string, TokenSet, Fetch> = {};
    const context: Fetch = { fetchToken, capAt };
    const token = await this.entries.forceFetch(key, { context, status });
    if (context.keep === false && this.entries.peek(key) === token) this.entries.delete(key);
    return { token, cached: status.fetch === 'hit' };
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}
