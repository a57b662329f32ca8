// Access tokens held in process memory until shortly before they expire, fetched once however many calls
// wait for the same key (single flight). Bounded: past `max` keys the oldest entry goes.
import type { TokenSet } from './auth-server.js';

/** A token is renewed this long before its `exp` (a call must not set out with a token about to lapse). */
export const EARLY_RENEWAL_MS = 30_000;
/** A token whose server gave no lifetime is reused this long. */
const UNDATED_TTL_MS = 60_000;

export function freshUntil(token: Pick<TokenSet, 'expiresAt'>, fetchedAt: number): number {
  return token.expiresAt === undefined ? fetchedAt + UNDATED_TTL_MS : token.expiresAt - EARLY_RENEWAL_MS;
}

interface Entry {
  token: TokenSet;
  freshUntil: number;
}

export class AccessTokenCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<TokenSet>>();

  constructor(
    private readonly max: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** `capAt`: never keep the token past this time (the subject token's own expiry). */
  async get(key: string, fetchToken: () => Promise<TokenSet>, capAt = Number.POSITIVE_INFINITY): Promise<{ token: TokenSet; cached: boolean }> {
    const entry = this.entries.get(key);
    if (entry && entry.freshUntil > this.now()) return { token: entry.token, cached: true };
    let flight = this.inFlight.get(key);
    if (!flight) {
      flight = fetchToken()
        .then((token) => {
          const fetchedAt = this.now();
          const until = Math.min(freshUntil(token, fetchedAt), capAt);
          if (until > fetchedAt && this.max > 0) {
            this.entries.delete(key);
            this.entries.set(key, { token, freshUntil: until });
            while (this.entries.size > this.max) {
              const oldest = this.entries.keys().next().value;
              if (oldest === undefined) break;
              this.entries.delete(oldest);
            }
          }
          return token;
        })
        .finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, flight);
    }
    return { token: await flight, cached: false };
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}
