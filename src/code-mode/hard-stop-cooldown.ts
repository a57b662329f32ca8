import { performance } from 'node:perf_hooks';
import { LRUCache } from 'lru-cache';

/**
 * A tenant whose script forced its sandbox worker to be terminated (a slice past its CPU limit inside one
 * native operation, or the worker's V8 heap exhausted) is a suspect while remembered: its scripts never share
 * a worker with another tenant's. From its second forced stop on its scripts are refused for a cooldown, so
 * repeating it costs the tenant, not others (docs/code-mode.md#a-script-that-must-be-stopped-by-force). The
 * first is free: on a loaded machine the watchdog can also reach a plain loop before the engine does.
 */
export const HARD_STOP_COOLDOWN_MS = 10_000;
/** Each further forced stop while the tenant is remembered doubles its cooldown, up to this. */
export const HARD_STOP_COOLDOWN_MAX_MS = 10 * 60_000;
/** A tenant is remembered this long after its last forced stop or cooldown; one after that counts as the first. */
const REMEMBERED_AFTER_MS = HARD_STOP_COOLDOWN_MAX_MS;
/** Tenants remembered at once (the least recently struck are forgotten first). */
const REMEMBERED_TENANTS = 10_000;

interface Strikes {
  readonly count: number;
  readonly until: number;
}

export class HardStopCooldowns {
  private readonly tenants: LRUCache<string, Strikes>;

  /** `now`: a monotonic clock in ms (tests pass their own). */
  constructor(private readonly now: () => number = () => performance.now()) {
    this.tenants = new LRUCache<string, Strikes>({ max: REMEMBERED_TENANTS, perf: { now }, ttlResolution: 0 });
  }

  /** Counts a forced stop against `tenant`; returns its cooldown in ms (0 for its first). */
  strike(tenant: string): number {
    const count = (this.tenants.get(tenant)?.count ?? 0) + 1;
    const cooldownMs = count === 1 ? 0 : Math.min(HARD_STOP_COOLDOWN_MAX_MS, HARD_STOP_COOLDOWN_MS * 2 ** (count - 2));
    this.tenants.set(tenant, { count, until: this.now() + cooldownMs }, { ttl: cooldownMs + REMEMBERED_AFTER_MS });
    return cooldownMs;
  }

  /** Whether `tenant` forced a stop it is still remembered for: its scripts share no worker. */
  suspect(tenant: string): boolean {
    return this.tenants.has(tenant);
  }

  /** What is left of `tenant`'s cooldown in ms; 0 when it has none. */
  remaining(tenant: string): number {
    const strikes = this.tenants.get(tenant);
    return strikes ? Math.max(0, Math.ceil(strikes.until - this.now())) : 0;
  }
}
