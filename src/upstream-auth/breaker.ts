// One breaker per authorization server (docs/security-model.md#upstream-identity): after a run of failures
// its token endpoint is not asked for a while, so calls needing it fail fast instead of each waiting out
// the timeout. In process memory, like the call breakers (src/pipeline/circuit-state.ts explains why).

export interface BreakerOptions {
  /** Consecutive failures that open it. */
  failures: number;
  /** How long it stays open before one request may probe. */
  coolDownMs: number;
}

export interface Breaker {
  /** How long until a request may go, 0 when it may go now. */
  blockedForMs(now: number): number;
  record(ok: boolean, now: number): void;
}

export function createBreaker(options: BreakerOptions): Breaker {
  let failures = 0;
  let openUntil = 0;
  return {
    blockedForMs: (now) => Math.max(0, openUntil - now),
    record(ok, now) {
      if (ok) {
        failures = 0;
        openUntil = 0;
        return;
      }
      failures += 1;
      if (failures >= options.failures) openUntil = now + options.coolDownMs;
    },
  };
}
