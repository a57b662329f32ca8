import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { builtinPolicies } from '../../../policies/index.js';
import { createPolicyChain, type PolicyChain, type PolicyChainOptions } from '../../../src/pipeline/chain.js';
import { createPolicyMetrics } from '../../../src/pipeline/policy-metrics.js';
import { DEFAULT_POLICY_ORDER } from '../../../src/pipeline/order.js';
import type { StateStore } from '../../../src/store/types.js';
import { trail } from '../../fixtures/tag-policy.mjs';
import { makeCall, makeCtx, makeDeps, makeTool, recordingTerminal } from '../../helpers/policy-fixtures.js';

const baseDir = fileURLToPath(new URL('../../fixtures/', import.meta.url));

/** A chain of the built-in policies; `terminal` defaults to one that records its calls. */
function buildChain(options: Omit<PolicyChainOptions, 'builtins' | 'baseDir' | 'terminal'> & Partial<PolicyChainOptions>): Promise<PolicyChain> {
  return createPolicyChain({ builtins: builtinPolicies, baseDir, terminal: recordingTerminal(), ...options });
}

/** Wraps a store to count hitWindow calls. */
function countingStore(deps: ReturnType<typeof makeDeps>): StateStore & { hits: number } {
  const inner = deps.store;
  const counted: StateStore & { hits: number } = {
    ...inner,
    kind: inner.kind,
    hits: 0,
    hitWindow: async (...args) => {
      counted.hits++;
      return inner.hitWindow(...args);
    },
  };
  return counted;
}

describe('createPolicyChain', () => {
  it('builds the default order when the tenant configures nothing', async () => {
    const chain = await buildChain({ deps: makeDeps() });
    expect(chain.policies).toEqual([...DEFAULT_POLICY_ORDER]);
  });

  it("says which tools a built-in policy applies to: approval's tools only, none when it is off or unconfigured", async () => {
    const gated = makeTool({ name: 'create_ticket' });
    const other = makeTool({ name: 'read_ticket' });
    const chain = await buildChain({ tenantPolicies: { approval: { tools: ['create_*'] } }, deps: makeDeps() });
    expect([chain.applies('approval', gated), chain.applies('approval', other)]).toEqual([true, false]);
    expect(chain.applies('audit', other)).toBe(true);
    for (const approval of [false, { tools: [] }]) {
      expect((await buildChain({ tenantPolicies: { approval }, deps: makeDeps() })).applies('approval', gated)).toBe(false);
    }
  });

  it('audits a denied call once and counts it against the rate limit once', async () => {
    const deps = makeDeps();
    const store = countingStore(deps);
    const terminal = recordingTerminal();
    const chain = await buildChain({ tenantPolicies: { 'rate-limit': { limit: 10 } }, deps: { ...deps, store }, terminal });
    const result = await chain(makeCall(), makeCtx({ checkAccess: () => ({ ok: false, reason: 'denied by tenant rule' }) }));
    expect(result.error?.errorType).toBe('PERMISSION_DENIED');
    expect(deps.audit.events.map((e) => e.outcome)).toEqual(['PERMISSION_DENIED']);
    expect(store.hits).toBe(1);
    expect(terminal.calls).toHaveLength(0);
  });

  it('never lets a rate-limited call reach the executor, and audits it', async () => {
    const deps = makeDeps();
    const terminal = recordingTerminal();
    const chain = await buildChain({ tenantPolicies: { 'rate-limit': { limit: 1 } }, deps, terminal });
    await chain(makeCall(), makeCtx());
    const limited = await chain(makeCall(), makeCtx());
    expect(limited.error?.errorType).toBe('RATE_LIMITED');
    expect(terminal.calls).toHaveLength(1);
    expect(deps.audit.events.map((e) => e.outcome)).toEqual(['ok', 'RATE_LIMITED']);
  });

  it('binds arguments from tenant bindings before the approval stores the call', async () => {
    const deps = makeDeps();
    const chain = await buildChain({
      tenantPolicies: { approval: { tools: ['knowledge_search'] } },
      tenantBindings: { knowledge_search: { filter: { tenant: '${principal.tenant}' } } },
      deps,
    });
    const pending = await chain(makeCall(makeTool({ name: 'knowledge_search' }), { query: 'q', filter: { tenant: 'globex' } }), makeCtx());
    expect(pending.status).toBe('pending_approval');
    const [record] = await deps.approvals.listPending('acme');
    expect(record!.call.boundArguments).toEqual({ query: 'q', filter: { tenant: 'acme' } });
    expect(record!.call.arguments).toEqual({ query: 'q', filter: { tenant: 'globex' } }); // replayed and re-bound on approval
  });

  it('switches a policy off with false but refuses to switch off audit or access', async () => {
    const chain = await buildChain({ tenantPolicies: { retry: false, 'circuit-breaker': false }, deps: makeDeps() });
    expect(chain.policies).not.toContain('retry');
    expect(chain.policies).not.toContain('circuit-breaker');
    await expect(buildChain({ tenantPolicies: { audit: false }, deps: makeDeps() })).rejects.toThrow('policies.audit cannot be switched off');
    await expect(buildChain({ tenantPolicies: { access: false }, deps: makeDeps() })).rejects.toThrow('policies.access cannot be switched off');
  });

  it('fails fast on unknown policies and bad options, naming the key', async () => {
    await expect(buildChain({ tenantPolicies: { ratelimit: {} }, deps: makeDeps() })).rejects.toThrow('policies.ratelimit is not a known policy');
    await expect(buildChain({ tenantPolicies: { timeout: { defaultMs: 'soon' } }, deps: makeDeps() })).rejects.toThrow(/policies\.timeout\.defaultMs/);
    await expect(buildChain({ tenantPolicies: { custom: [{ module: './x.mjs' }] }, deps: makeDeps() })).rejects.toThrow(/policies\.custom/);
    await expect(buildChain({ tenantPolicies: { custom: [{ module: './missing.mjs', before: 'approval' }] }, deps: makeDeps() })).rejects.toThrow(
      /policies\.custom\.0\.module cannot be loaded/,
    );
  });

  it('inserts custom policy modules at their named position', async () => {
    // The fixture module, and its trail, are shared by every test file of a worker (isolate: false).
    trail.length = 0;
    const terminal = recordingTerminal();
    const chain = await buildChain({
      tenantPolicies: {
        approval: false,
        custom: [
          { module: './tag-policy.mjs', name: 'pii-guard', before: 'approval', options: { tag: 'pii' } },
          { module: './tag-policy.mjs', after: 'timeout', options: { tag: 'last' } },
        ],
      },
      deps: makeDeps(),
      terminal: async (call, ctx) => {
        trail.push('executor');
        return terminal(call, ctx);
      },
    });
    expect(chain.policies).toEqual(['audit', 'rate-limit', 'access', 'bind-arguments', 'cedar', 'pii-guard', 'max-depth', 'circuit-breaker', 'budget', 'retry', 'timeout', 'custom-1', 'guardrails']);
    await chain(makeCall(), makeCtx());
    expect(trail).toEqual(['pii', 'last', 'executor']);
  });

  it('counts policy decisions on the registry it is given', async () => {
    const registry = new Registry();
    const chain = await buildChain({ tenantPolicies: { 'max-depth': { limit: 1 } }, deps: { ...makeDeps(), metrics: createPolicyMetrics(registry) } });
    await chain(makeCall(), makeCtx({ depth: 2 }));
    const text = await registry.metrics();
    expect(text).toContain('toolgate_policy_decisions_total{policy="access",decision="pass"} 1');
    expect(text).toContain('toolgate_policy_decisions_total{policy="max-depth",decision="DEPTH_EXCEEDED"} 1');
    // Policies after the refusal never ran: their `pass` series exist (at 0) but were not counted.
    expect(text).toContain('toolgate_policy_decisions_total{policy="timeout",decision="pass"} 0');
  });
});

describe('the example pii-guard policy', () => {
  it('loads from config and refuses a call carrying a card number before it reaches the executor', async () => {
    const examples = fileURLToPath(new URL('../../../examples/', import.meta.url));
    const terminal = recordingTerminal();
    const chain = await buildChain({ tenantPolicies: { custom: [{ module: './policies/pii-guard.mjs', name: 'pii-guard', before: 'approval' }] }, deps: makeDeps(), baseDir: examples, terminal });
    const refused = await chain(makeCall(makeTool(), { note: 'card 4111 1111 1111 1111' }), makeCtx());
    expect(refused.error?.errorType).toBe('PERMISSION_DENIED');
    expect((await chain(makeCall(makeTool(), { note: 'hello' }), makeCtx())).ok).toBe(true);
    expect(terminal.calls).toHaveLength(1);
  });
});
