// LiveSnapshot and buildSnapshot (src/snapshot/): one live reference, replaced whole by a reload or a provider's
// change; providers carried over by config key, retired ones closed after the swap, a failed build leaving the
// old snapshot serving, reloads one at a time, tenant invalidations surviving a reload that raced them.
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { builtinPolicies } from '../../../policies/index.js';
import type { Tool } from '../../../src/call/types.js';
import { validateConfigObject } from '../../../src/config/load.js';
import type { GatewayConfig } from '../../../src/config/types.js';
import type { ToolProvider } from '../../../src/registry/tool-provider.js';
import { LiveSnapshot } from '../../../src/snapshot/live-snapshot.js';
import type { ProviderSpec, SnapshotDeps } from '../../../src/snapshot/snapshot.js';
import { makeDeps } from '../../helpers/policy-fixtures.js';
import { silentLog, tool } from '../../helpers/registry.js';

const gatedPolicy = fileURLToPath(new URL('../../fixtures/gated-policy.mjs', import.meta.url));

/** A provider whose tools can change on their own, recording its lifecycle. */
class FakeProvider implements ToolProvider {
  readonly kind = 'function' as const;
  started = 0;
  closed = 0;
  private listener: (() => void) | undefined;
  constructor(
    readonly key: string,
    private toolList: Tool[],
    private readonly failStart = false,
  ) {}
  tools(): readonly Tool[] {
    return this.toolList;
  }
  async start(): Promise<void> {
    this.started += 1;
    if (this.failStart) throw new Error(`${this.key} cannot start`);
  }
  async close(): Promise<void> {
    this.closed += 1;
  }
  onChange(listener: () => void): void {
    this.listener = listener;
  }
  change(tools: Tool[]): void {
    this.toolList = tools;
    this.listener?.();
  }
}

/** Config whose `providers` (a test-only list of keys, read by providerSpecs) says which providers it needs. */
function config(keys: string[], tenants: Record<string, unknown> = { t: {} }): GatewayConfig & { keys: string[] } {
  return Object.assign(validateConfigObject({ tenants }, process.cwd(), undefined), { keys });
}

/** What test/fixtures/gated-policy.mjs waits for, and whether it got there. */
const gate: { promise: Promise<void>; reached: boolean } = { promise: Promise.resolve(), reached: false };

function harness(options: { failing?: string[]; metrics?: { reloaded: (ok: boolean) => void } } = {}) {
  const made: FakeProvider[] = [];
  const providerSpecs = (next: GatewayConfig): ProviderSpec[] =>
    (next as GatewayConfig & { keys: string[] }).keys.map((key) => ({
      key,
      create: () => {
        const provider = new FakeProvider(key, [tool(`${key.split('@')[0]}_tool`)], options.failing?.includes(key));
        made.push(provider);
        return provider;
      },
    }));
  const deps: SnapshotDeps = {
    log: silentLog,
    env: {},
    providerSpecs,
    // Read by test/fixtures/gated-policy.mjs's factory (a getter, so the test sees when it got there).
    policyDeps: Object.defineProperty(makeDeps(), 'testGate', {
      get: (): Promise<void> => {
        gate.reached = true;
        return gate.promise;
      },
    }),
    builtinPolicies,
    registryTools: [],
    onShadowed: () => undefined,
  };
  return { made, deps, metrics: options.metrics ?? { reloaded: vi.fn() } };
}

const toolNames = (live: LiveSnapshot): string[] => live.current.catalog.tools.map((t) => t.name).sort();

describe('LiveSnapshot', () => {
  it('starts each provider once and builds the catalog from them', async () => {
    const { made, deps, metrics } = harness();
    const live = await LiveSnapshot.create(config(['a', 'b']), deps, metrics);
    expect(made.map((p) => [p.key, p.started])).toEqual([
      ['a', 1],
      ['b', 1],
    ]);
    expect(toolNames(live)).toEqual(['a_tool', 'b_tool']);
  });

  it('swaps the whole snapshot on reload: unchanged providers carried over, retired ones closed after the swap, new ones started', async () => {
    const { made, deps, metrics } = harness();
    const live = await LiveSnapshot.create(config(['a', 'b']), deps, metrics);
    const before = live.current;
    const listener = vi.fn();
    live.onChange(listener);
    const { changed } = await live.reload(config(['a', 'c']));
    expect(changed).toBe(true);
    expect(live.current).not.toBe(before);
    const [a, b, c] = made;
    expect(made).toHaveLength(3);
    expect(live.current.providers.get('a')).toBe(a);
    expect(a!.started).toBe(1);
    expect(a!.closed).toBe(0);
    expect(b!.closed).toBe(1);
    expect(c!.started).toBe(1);
    expect(toolNames(live)).toEqual(['a_tool', 'c_tool']);
    expect(listener).toHaveBeenCalledTimes(1);
    expect(metrics.reloaded).toHaveBeenCalledWith(true);
    // The snapshot a request took before the reload is untouched.
    expect(before.catalog.tools.map((t) => t.name).sort()).toEqual(['a_tool', 'b_tool']);
  });

  it('keeps the old snapshot serving when the new one cannot be built, and closes what the failed build started', async () => {
    const { made, deps, metrics } = harness({ failing: ['bad'] });
    const live = await LiveSnapshot.create(config(['a']), deps, metrics);
    const before = live.current;
    const listener = vi.fn();
    live.onChange(listener);
    await expect(live.reload(config(['a', 'good', 'bad']))).rejects.toThrow(/bad cannot start/);
    expect(live.current).toBe(before);
    expect(listener).not.toHaveBeenCalled();
    expect(metrics.reloaded).toHaveBeenCalledWith(false);
    const good = made.find((p) => p.key === 'good')!;
    const bad = made.find((p) => p.key === 'bad')!;
    expect([good.closed, bad.closed]).toEqual([1, 1]);
    expect(made.find((p) => p.key === 'a')!.closed).toBe(0);
    // A later good reload still works: the failure left no reload stuck.
    await live.reload(config(['a', 'good']));
    expect(toolNames(live)).toEqual(['a_tool', 'good_tool']);
  });

  it('reports an unchanged config as unchanged and runs reloads one at a time, in order', async () => {
    const { deps, metrics } = harness();
    const first = config(['a']);
    const live = await LiveSnapshot.create(first, deps, metrics);
    expect((await live.reload(first)).changed).toBe(false);
    const order: string[] = [];
    await Promise.all([live.reload(config(['a', 'x'])).then(() => order.push('x')), live.reload(config(['a', 'y'])).then(() => order.push('y'))]);
    expect(order).toEqual(['x', 'y']);
    expect(toolNames(live)).toEqual(['a_tool', 'y_tool']);
  });

  it("rebuilds the live catalog when one of its providers' tools change, and ignores a provider it no longer holds", async () => {
    const { made, deps, metrics } = harness();
    const live = await LiveSnapshot.create(config(['a', 'b']), deps, metrics);
    const listener = vi.fn();
    live.onChange(listener);
    made[0]!.change([tool('a_tool'), tool('a_new')]);
    expect(toolNames(live)).toEqual(['a_new', 'a_tool', 'b_tool']);
    expect(listener).toHaveBeenCalledTimes(1);
    await live.reload(config(['a']));
    const afterReload = live.current;
    made[1]!.change([tool('b_ghost')]);
    expect(live.current).toBe(afterReload);
    expect(toolNames(live)).not.toContain('b_ghost');
  });

  it('tells every listener of a swap even when one throws, and stops telling an unsubscribed one', async () => {
    const { made, deps, metrics } = harness();
    const live = await LiveSnapshot.create(config(['a']), deps, metrics);
    const throwing = vi.fn(() => {
      throw new Error('listener broke');
    });
    const second = vi.fn();
    const unsubscribe = live.onChange(throwing);
    live.onChange(second);
    made[0]!.change([tool('a_tool'), tool('a_more')]);
    expect([throwing.mock.calls.length, second.mock.calls.length]).toEqual([1, 1]);
    unsubscribe();
    made[0]!.change([tool('a_tool')]);
    expect([throwing.mock.calls.length, second.mock.calls.length]).toEqual([1, 2]);
  });

  it('compiles a tenant on first use, drops it on invalidation, and keeps an invalidation that raced a reload', async () => {
    const { deps, metrics } = harness();
    const live = await LiveSnapshot.create(config(['a'], { t: {}, u: {} }), deps, metrics);
    expect(live.current.tenants.isCompiled('t')).toBe(false);
    const compiled = await live.current.tenants.load('t');
    expect(compiled?.view.id).toBe('t');
    expect(live.current.tenants.isCompiled('t')).toBe(true);
    live.invalidateTenant('t');
    expect(live.current.tenants.isCompiled('t')).toBe(false);

    // A reload builds from the live snapshot; an invalidation arriving after it took the compiled tenants over
    // (here while it checks a new tenant, whose policy module waits for the gate) applies to the new one too.
    await live.current.tenants.load('u');
    let release!: () => void;
    gate.promise = new Promise<void>((resolve) => (release = resolve));
    gate.reached = false;
    const reloading = live.reload(config(['a'], { t: {}, u: {}, v: { policies: { custom: [{ module: gatedPolicy, before: 'approval' }] } } }));
    await vi.waitFor(() => expect(gate.reached).toBe(true));
    live.invalidateTenant('u');
    release();
    await reloading;
    expect(live.current.tenants.isCompiled('u')).toBe(false);
    expect((await live.current.tenants.load('u'))?.view.id).toBe('u');
    expect(await live.current.tenants.load('nobody')).toBeUndefined();
  });
});
