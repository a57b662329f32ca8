import { describe, expect, it } from 'vitest';
import { circuitBreakerPolicy } from '../../../policies/circuit-breaker.js';
import { callFailure, markPermanent, successResult } from '../../../src/call/tool-result.js';
import { createCircuitRegistry } from '../../../src/pipeline/circuit-state.js';
import { noopPolicyMetrics } from '../../../src/pipeline/policy-metrics.js';
import type { ErrorType, ToolCall } from '../../../src/call/types.js';
import { asPolicy, fakeClock, makeCall, makeCtx, makeDeps, makeTool } from '../../helpers/policy-fixtures.js';

const upstreamTool = makeTool({ name: 'weather', service: 'weather-api' });

function scripted(outcomes: Array<ErrorType | 'ok'>) {
  const seen: string[] = [];
  const terminal = async (call: ToolCall) => {
    const next = outcomes.shift() ?? 'ok';
    seen.push(next);
    return next === 'ok' ? successResult(call, 'fine') : callFailure(call, next, 'upstream said no');
  };
  return Object.assign(terminal, { seen });
}

describe('circuit-breaker policy', () => {
  it('opens after N consecutive upstream failures, answers CIRCUIT_OPEN without calling, and recovers after a good probe', async () => {
    const clock = fakeClock();
    const states: string[] = [];
    const deps = makeDeps({ clock, metrics: { ...noopPolicyMetrics, circuitState: (_s, state) => void states.push(state) } });
    const policy = asPolicy(circuitBreakerPolicy({ failureThreshold: 3, cooldownMs: 1000 }, deps));
    const terminal = scripted(['UPSTREAM_ERROR', 'TIMEOUT', 'UPSTREAM_ERROR', 'ok', 'ok']);
    for (let i = 0; i < 3; i++) await policy(makeCall(upstreamTool), makeCtx(), terminal);
    const refused = await policy(makeCall(upstreamTool), makeCtx(), terminal);
    expect(refused.error?.errorType).toBe('CIRCUIT_OPEN');
    expect(terminal.seen).toHaveLength(3);

    clock.advance(1000);
    expect((await policy(makeCall(upstreamTool), makeCtx(), terminal)).ok).toBe(true); // the probe
    expect((await policy(makeCall(upstreamTool), makeCtx(), terminal)).ok).toBe(true);
    expect(states).toEqual(['closed', 'open', 'half_open', 'closed']);
  });

  it('does not count failures marked permanent (one caller\'s HTTP 404s say nothing about the upstream)', async () => {
    const policy = asPolicy(circuitBreakerPolicy({ failureThreshold: 2, cooldownMs: 1000 }, makeDeps({ clock: fakeClock() })));
    let calls = 0;
    const notFound = async (call: ToolCall) => (calls++, markPermanent(callFailure(call, 'UPSTREAM_ERROR', 'API answered HTTP 404')));
    for (let i = 0; i < 5; i++) await policy(makeCall(upstreamTool), makeCtx(), notFound);
    expect(calls).toBe(5);
    expect((await policy(makeCall(upstreamTool), makeCtx(), scripted(['ok']))).ok).toBe(true);
  });

  it('goes half-open at once when the upstream reports it reconnected; a reconnect changes nothing for a closed circuit or a running probe', async () => {
    const clock = fakeClock();
    const states: string[] = [];
    const circuits = createCircuitRegistry((_service, state) => void states.push(state));
    const policy = asPolicy(circuitBreakerPolicy({ failureThreshold: 1, cooldownMs: 30_000 }, makeDeps({ clock, circuits })));
    circuits.upstreamRecovered('weather-api', clock.now()); // no circuit yet: nothing to do
    expect((await policy(makeCall(upstreamTool), makeCtx(), scripted(['ok']))).ok).toBe(true);
    circuits.upstreamRecovered('weather-api', clock.now());
    expect(states).toEqual(['closed']);
    await policy(makeCall(upstreamTool), makeCtx(), scripted(['UPSTREAM_ERROR']));
    expect((await policy(makeCall(upstreamTool), makeCtx(), scripted(['ok']))).error?.errorType).toBe('CIRCUIT_OPEN');

    circuits.upstreamRecovered('weather-api', clock.now());
    let release!: () => void;
    const probe = policy(makeCall(upstreamTool), makeCtx(), async (call) => {
      await new Promise<void>((resolve) => (release = resolve));
      return successResult(call, 'back');
    });
    circuits.upstreamRecovered('weather-api', clock.now()); // another reconnect while the probe runs
    expect((await policy(makeCall(upstreamTool), makeCtx(), scripted(['ok']))).error?.errorType).toBe('CIRCUIT_OPEN');
    release();
    expect((await probe).ok).toBe(true);
    expect(states).toEqual(['closed', 'open', 'half_open', 'closed']);
  });

  it('lets only one probe through while half-open and reopens when it fails', async () => {
    const clock = fakeClock();
    const policy = asPolicy(circuitBreakerPolicy({ failureThreshold: 1, cooldownMs: 500 }, makeDeps({ clock })));
    await policy(makeCall(upstreamTool), makeCtx(), scripted(['UPSTREAM_ERROR']));
    clock.advance(500);
    let release!: () => void;
    const slowProbe = policy(makeCall(upstreamTool), makeCtx(), async (call) => {
      await new Promise<void>((resolve) => (release = resolve));
      return callFailure(call, 'UPSTREAM_ERROR', 'still down');
    });
    const second = await policy(makeCall(upstreamTool), makeCtx(), scripted(['ok']));
    expect(second.error?.errorType).toBe('CIRCUIT_OPEN');
    release();
    await slowProbe;
    expect((await policy(makeCall(upstreamTool), makeCtx(), scripted(['ok']))).error?.errorType).toBe('CIRCUIT_OPEN');
  });

  it('does not count calls their caller cancelled (client hang-ups), and a cancelled probe gives its slot back', async () => {
    const clock = fakeClock();
    const policy = asPolicy(circuitBreakerPolicy({ failureThreshold: 2, cooldownMs: 500 }, makeDeps({ clock })));
    const hungUp = () => {
      const controller = new AbortController();
      controller.abort(new Error('client closed the connection'));
      return makeCtx({ signal: controller.signal });
    };
    // Twenty cancelled calls ending as TIMEOUT (or throwing): the circuit stays closed.
    for (let i = 0; i < 10; i++) await policy(makeCall(upstreamTool), hungUp(), scripted(['TIMEOUT']));
    for (let i = 0; i < 10; i++) {
      await policy(makeCall(upstreamTool), hungUp(), async () => {
        throw new Error('cancelled');
      }).catch(() => undefined);
    }
    expect((await policy(makeCall(upstreamTool), makeCtx(), scripted(['ok']))).ok).toBe(true);

    // Real failures still open it; a probe whose caller hung up does not decide, and the next call probes.
    await policy(makeCall(upstreamTool), makeCtx(), scripted(['UPSTREAM_ERROR', 'UPSTREAM_ERROR']));
    await policy(makeCall(upstreamTool), makeCtx(), scripted(['UPSTREAM_ERROR']));
    expect((await policy(makeCall(upstreamTool), makeCtx(), scripted(['ok']))).error?.errorType).toBe('CIRCUIT_OPEN');
    clock.advance(500);
    expect((await policy(makeCall(upstreamTool), hungUp(), scripted(['TIMEOUT']))).error?.errorType).toBe('TIMEOUT');
    expect((await policy(makeCall(upstreamTool), makeCtx(), scripted(['ok']))).ok).toBe(true);
    expect((await policy(makeCall(upstreamTool), makeCtx(), scripted(['ok']))).ok).toBe(true);
  });

  it('does not count validation or permission failures', async () => {
    const policy = asPolicy(circuitBreakerPolicy({ failureThreshold: 2 }, makeDeps({ clock: fakeClock() })));
    const terminal = scripted(['VALIDATION_ERROR', 'PERMISSION_DENIED', 'VALIDATION_ERROR', 'ok']);
    for (let i = 0; i < 4; i++) expect((await policy(makeCall(upstreamTool), makeCtx(), terminal)).error?.errorType).not.toBe('CIRCUIT_OPEN');
  });

  it('opens on a failure rate over the window', async () => {
    const policy = asPolicy(circuitBreakerPolicy({ failureThreshold: 100, failureRate: { threshold: 0.5, minCalls: 4 } }, makeDeps({ clock: fakeClock() })));
    const terminal = scripted(['ok', 'UPSTREAM_ERROR', 'ok', 'UPSTREAM_ERROR']);
    for (let i = 0; i < 4; i++) await policy(makeCall(upstreamTool), makeCtx(), terminal);
    expect((await policy(makeCall(upstreamTool), makeCtx(), terminal)).error?.errorType).toBe('CIRCUIT_OPEN');
  });

  it('ignores tools without a service', async () => {
    const policy = asPolicy(circuitBreakerPolicy({ failureThreshold: 1 }, makeDeps()));
    const terminal = scripted(['UPSTREAM_ERROR', 'UPSTREAM_ERROR', 'ok']);
    for (let i = 0; i < 3; i++) await policy(makeCall(), makeCtx(), terminal);
    expect(terminal.seen).toEqual(['UPSTREAM_ERROR', 'UPSTREAM_ERROR', 'ok']);
  });
});

describe('circuit attribution (per service and tenant)', () => {
  const ctxOf = (tenant: string) => makeCtx({ principal: { ...makeCtx().principal, tenant } });

  it("opens one tenant's circuit on its own failures only; a reconnect of the upstream reaches every tenant's circuit", async () => {
    const clock = fakeClock();
    const members: string[] = [];
    const circuits = createCircuitRegistry((label, state, member) => void members.push(`${label} ${state} ${member}`));
    const policy = asPolicy(circuitBreakerPolicy({ failureThreshold: 2, cooldownMs: 30_000 }, makeDeps({ clock, circuits })));
    for (let i = 0; i < 2; i++) await policy(makeCall(upstreamTool), ctxOf('acme'), scripted(['UPSTREAM_ERROR']));
    expect((await policy(makeCall(upstreamTool), ctxOf('acme'), scripted(['ok']))).error?.errorType).toBe('CIRCUIT_OPEN');
    expect((await policy(makeCall(upstreamTool), ctxOf('globex'), scripted(['ok']))).ok).toBe(true);
    expect([circuits.stateOf('weather-api', 'acme'), circuits.stateOf('weather-api', 'globex'), circuits.stateOf('weather-api')]).toEqual(['open', 'closed', 'open']);
    // Metrics: one label per service, each tenant's circuit a member of it.
    expect(members).toContain('weather-api open weather-api\u0000acme');

    circuits.upstreamRecovered('weather-api', clock.now());
    expect(circuits.stateOf('weather-api', 'acme')).toBe('half_open');
    expect((await policy(makeCall(upstreamTool), ctxOf('acme'), scripted(['ok']))).ok).toBe(true);
    expect(circuits.stateOf('weather-api')).toBe('closed');
  });

  it('lets a probe that throws (the gateway\'s own fault) decide nothing: the circuit stays half-open and the next call probes', async () => {
    const clock = fakeClock();
    const policy = asPolicy(circuitBreakerPolicy({ failureThreshold: 2, cooldownMs: 500 }, makeDeps({ clock })));
    await policy(makeCall(upstreamTool), makeCtx(), scripted(['UPSTREAM_ERROR', 'UPSTREAM_ERROR']));
    await policy(makeCall(upstreamTool), makeCtx(), scripted(['UPSTREAM_ERROR']));
    clock.advance(500);
    await policy(makeCall(upstreamTool), makeCtx(), async () => {
      throw new Error('bug');
    }).catch(() => undefined);
    // Still half-open: one failed probe reopens it (closed, one failure of two would not).
    expect((await policy(makeCall(upstreamTool), makeCtx(), scripted(['UPSTREAM_ERROR']))).error?.errorType).toBe('UPSTREAM_ERROR');
    expect((await policy(makeCall(upstreamTool), makeCtx(), scripted(['ok']))).error?.errorType).toBe('CIRCUIT_OPEN');
  });

  it('does not count a throw from below (the gateway\'s own fault, not the upstream\'s)', async () => {
    const policy = asPolicy(circuitBreakerPolicy({ failureThreshold: 1 }, makeDeps({ clock: fakeClock() })));
    for (let i = 0; i < 3; i++) {
      await policy(makeCall(upstreamTool), makeCtx(), async () => {
        throw new Error('bug');
      }).catch(() => undefined);
    }
    expect((await policy(makeCall(upstreamTool), makeCtx(), scripted(['ok']))).ok).toBe(true);
  });

  it('keeps at most maxCircuits: idle circuits are forgotten first, an open one never', async () => {
    const clock = fakeClock();
    const circuits = createCircuitRegistry(undefined, 3);
    const policy = asPolicy(circuitBreakerPolicy({ failureThreshold: 1, cooldownMs: 30_000 }, makeDeps({ clock, circuits })));
    await policy(makeCall(upstreamTool), ctxOf('t0'), scripted(['UPSTREAM_ERROR'])); // t0: open
    for (let i = 1; i <= 50; i++) await policy(makeCall(upstreamTool), ctxOf(`t${i}`), scripted(['ok']));
    expect(circuits.stateOf('weather-api', 't0')).toBe('open');
    const kept = Array.from({ length: 51 }, (_, i) => circuits.stateOf('weather-api', `t${i}`)).filter((state) => state !== undefined);
    expect(kept.length).toBeLessThanOrEqual(3);
    expect((await policy(makeCall(upstreamTool), ctxOf('t0'), scripted(['ok']))).error?.errorType).toBe('CIRCUIT_OPEN');
  });
});
