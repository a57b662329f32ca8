import type { CircuitStateName } from './policy-metrics.js';

/** A circuit's thresholds: the circuit-breaker policy's options (policies/circuit-breaker.ts) once parsed. */
export interface CircuitOptions {
  readonly failureThreshold: number;
  readonly cooldownMs: number;
  readonly failureRate?: { readonly threshold: number; readonly minCalls: number; readonly windowMs: number };
}

export type Admission = { admit: true; probe: boolean } | { admit: false; retryAfterMs: number };

export interface Circuit {
  readonly state: CircuitStateName;
  /** Closed with no failure counted: it may be forgotten (docs/security-model.md#breaker-attribution). */
  readonly idle: boolean;
  admit(now: number): Admission;
  /** Reports how an admitted call ended; `probe` as returned by `admit`. */
  record(failed: boolean, now: number, probe: boolean): void;
  /**
   * An admitted call ended without saying anything about the upstream (its caller cancelled it): nothing is
   * counted, and a probe gives its slot back so the next call probes instead.
   */
  release(probe: boolean): void;
  /** The upstream is back (it reconnected): an open circuit goes half-open at once, so the next call probes. */
  recovered(now: number): void;
}

export interface CircuitRegistry {
  /**
   * The circuit of one tenant's calls to a service (docs/security-model.md#breaker-attribution).
   * `label`: the service as metrics may name it (user-level services share one bucket label).
   */
  get(service: string, tenant: string, options: CircuitOptions, label?: string): Circuit;
  /**
   * A successful (re)connect of the service's upstream is a health signal: its breakers (every tenant's), if
   * open, go half-open now rather than after the rest of their cool-down (the outage may have lasted 0.5 s).
   */
  upstreamRecovered(service: string, now?: number): void;
  /**
   * The state of a tenant's circuit for a service in this process, or undefined before its first call
   * (closed). Without a tenant: the worst state among every tenant's (open, then half-open).
   */
  stateOf(service: string, tenant?: string): CircuitStateName | undefined;
}

/**
 * Reports a circuit's state under its metric label; `member` tells apart the circuits that share a label
 * (every tenant's circuit of one service, every user-level service).
 */
export type CircuitStateListener = (label: string, state: CircuitStateName, member: string) => void;

/** Circuits kept at most (tenants × services they call); idle ones are forgotten first. */
export const DEFAULT_MAX_CIRCUITS = 10_000;

/**
 * Breaker state per (upstream service, tenant), in this process' memory.
 *
 * Per tenant, so that one tenant's failing calls — whatever made them fail — can never answer another
 * tenant CIRCUIT_OPEN: each tenant is refused only on what its own calls saw. A real outage opens every
 * calling tenant's circuit within that tenant's own few calls, and a reconnect of the upstream moves them
 * all to half-open at once.
 *
 * Deliberately not in the shared store: a breaker reacts to what this replica sees (its own network path to
 * the upstream), must answer without a round trip on every call, and each replica opening on its own
 * failures converges just as fast (Envoy's outlier detection works the same way).
 *
 * Memory is bounded: past `maxCircuits` the idle circuits (closed, nothing counted) are forgotten; if none is
 * idle, a new pair gets a fresh circuit that is not kept (its calls run unguarded until room is made).
 *
 * The state machine is toolgate's own, not cockatiel's or opossum's: docs/architecture.md#why-our-own says why.
 */
export function createCircuitRegistry(onState: CircuitStateListener = () => {}, maxCircuits = DEFAULT_MAX_CIRCUITS): CircuitRegistry {
  const byService = new Map<string, Map<string, Circuit>>();
  let size = 0;

  const makeRoom = (): boolean => {
    for (const [service, tenants] of byService) {
      for (const [tenant, circuit] of tenants) {
        if (!circuit.idle) continue;
        tenants.delete(tenant);
        size -= 1;
      }
      if (tenants.size === 0) byService.delete(service);
    }
    return size < maxCircuits;
  };

  return {
    get(service, tenant, options, label = service) {
      let tenants = byService.get(service);
      const known = tenants?.get(tenant);
      if (known) return known;
      const member = `${service}\u0000${tenant}`;
      const circuit = createCircuit(options, (state) => onState(label, state, member));
      if (size >= maxCircuits && !makeRoom()) return circuit;
      if (!tenants) byService.set(service, (tenants = new Map()));
      tenants.set(tenant, circuit);
      size += 1;
      onState(label, 'closed', member);
      return circuit;
    },
    upstreamRecovered(service, now = Date.now()) {
      for (const circuit of byService.get(service)?.values() ?? []) circuit.recovered(now);
    },
    stateOf(service, tenant) {
      const tenants = byService.get(service);
      if (!tenants || tenant !== undefined) return tenants?.get(tenant ?? '')?.state;
      const states = new Set([...tenants.values()].map((circuit) => circuit.state));
      return states.has('open') ? 'open' : states.has('half_open') ? 'half_open' : tenants.size > 0 ? 'closed' : undefined;
    },
  };
}

/**
 * One circuit: toolgate's one breaker. The circuit-breaker policy keeps one per (service, tenant) in the
 * registry above; the upstream identity keeps one per authorization server (src/upstream-auth/auth-server.ts).
 * Closed until `failureThreshold` consecutive failures (or the failure rate) open it; after `cooldownMs` one
 * probe goes through (half-open), whose outcome closes or re-opens it.
 */
export function createCircuit(options: CircuitOptions, onState: (state: CircuitStateName) => void = () => {}): Circuit {
  let state: CircuitStateName = 'closed';
  let consecutive = 0;
  let openedAt = 0;
  let probing = false;
  let outcomes: Array<{ at: number; failed: boolean }> = [];

  const move = (next: CircuitStateName, now: number): void => {
    state = next;
    if (next === 'open') openedAt = now;
    if (next !== 'half_open') probing = false;
    if (next === 'closed') {
      consecutive = 0;
      outcomes = [];
    }
    onState(next);
  };

  const rateTripped = (now: number): boolean => {
    const rate = options.failureRate;
    if (!rate) return false;
    outcomes = outcomes.filter((o) => o.at > now - rate.windowMs);
    const failures = outcomes.filter((o) => o.failed).length;
    return outcomes.length >= rate.minCalls && failures / outcomes.length >= rate.threshold;
  };

  return {
    get state() {
      return state;
    },
    get idle() {
      // Remembered successes only dilute a failure rate: forgetting them can open this circuit sooner, never another's.
      return state === 'closed' && consecutive === 0 && !outcomes.some((o) => o.failed);
    },
    admit(now) {
      if (state === 'closed') return { admit: true, probe: false };
      if (state === 'open' && now >= openedAt + options.cooldownMs) {
        move('half_open', now);
        probing = true;
        return { admit: true, probe: true };
      }
      if (state === 'half_open' && !probing) {
        probing = true; // the last probe was released without an answer
        return { admit: true, probe: true };
      }
      // Half-open lets exactly one probe through; everyone else is refused until it reports.
      return { admit: false, retryAfterMs: Math.max(1, openedAt + options.cooldownMs - now) };
    },
    release(probe) {
      if (probe && state === 'half_open') probing = false;
    },
    recovered(now) {
      if (state === 'open') move('half_open', now);
    },
    record(failed, now, probe) {
      if (probe) {
        move(failed ? 'open' : 'closed', now);
        return;
      }
      if (state !== 'closed') return; // a straggler admitted before the circuit opened
      if (options.failureRate) outcomes.push({ at: now, failed });
      consecutive = failed ? consecutive + 1 : 0;
      if (consecutive >= options.failureThreshold || (failed && rateTripped(now))) move('open', now);
    },
  };
}
