import type { CircuitStateName } from '../src/pipeline/metrics.js';
import type { CircuitBreakerOptions as CircuitOptions } from './circuit-breaker.js';

export type Admission = { admit: true; probe: boolean } | { admit: false; retryAfterMs: number };

export interface Circuit {
  readonly state: CircuitStateName;
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
  /** `label`: the service as metrics may name it (user-level services share one bucket label). */
  get(service: string, options: CircuitOptions, label?: string): Circuit;
  /**
   * A successful (re)connect of the service's upstream is a health signal: its breaker, if open, goes
   * half-open now rather than after the rest of its cool-down (the outage may have lasted 0.5 s).
   */
  upstreamRecovered(service: string, now?: number): void;
  /** The state of a service's circuit in this process, or undefined before its first call (closed). */
  stateOf(service: string): CircuitStateName | undefined;
}

/** Reports a circuit's state under its metric label; `service` tells the circuits of one bucket apart. */
export type CircuitStateListener = (label: string, state: CircuitStateName, service: string) => void;

/**
 * Breaker state per upstream service, in this process' memory. Deliberately not in the shared store:
 * a breaker reacts to what this replica sees (its own network path to the upstream), must answer without
 * a round trip on every call, and each replica opening on its own failures converges just as fast
 * (Envoy's outlier detection works the same way).
 */
export function createCircuitRegistry(onState: CircuitStateListener = () => {}): CircuitRegistry {
  const circuits = new Map<string, Circuit>();
  return {
    get(service, options, label = service) {
      let circuit = circuits.get(service);
      if (!circuit) {
        circuit = createCircuit(options, (state) => onState(label, state, service));
        circuits.set(service, circuit);
        onState(label, 'closed', service);
      }
      return circuit;
    },
    upstreamRecovered(service, now = Date.now()) {
      circuits.get(service)?.recovered(now);
    },
    stateOf: (service) => circuits.get(service)?.state,
  };
}

function createCircuit(options: CircuitOptions, onState: (state: CircuitStateName) => void): Circuit {
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
