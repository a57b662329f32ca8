// CallerPools (src/snapshot/caller-pools.ts), the one owner of a caller's pool on a snapshot: the tenant
// compiled on first use, the store asked for the caller's own tools only when a name can need them, their
// absence said while the store is down, toolset subsets (another tenant's as unknown as none), code mode's
// pool through the injected source, and one execution scope kept per pool.
import { describe, expect, it, vi } from 'vitest';
import { builtinPolicies } from '../../../policies/index.js';
import type { Principal } from '../../../src/call/principal.js';
import type { Tool } from '../../../src/call/types.js';
import { validateConfigObject } from '../../../src/config/load.js';
import { createSchemaValidator } from '../../../src/execution/schema-validator.js';
import { createMetrics } from '../../../src/observability/gateway-metrics.js';
import type { Pool } from '../../../src/registry/pool.js';
import type { UserToolProvider } from '../../../src/registry/tool-provider.js';
import { userToolName } from '../../../src/registry/user-names.js';
import { CallerPools, UnknownTenantError } from '../../../src/snapshot/caller-pools.js';
import type { CodeModeSource, ToolsetHost } from '../../../src/snapshot/pool-cache.js';
import { buildSnapshot, type Snapshot } from '../../../src/snapshot/snapshot.js';
import { storeUnavailable } from '../../../src/store/unavailable.js';
import { makeDeps } from '../../helpers/policy-fixtures.js';
import { principal, silentLog, tool } from '../../helpers/registry.js';

const alice = principal({ tenant: 'acme', user: 'alice' });
const ownTool = tool(userToolName('alice', 'notes'), 'user-mcp');

async function snapshot(): Promise<Snapshot> {
  const config = validateConfigObject(
    {
      tenants: {
        acme: { toolsets: { ab: { tools: ['alpha', 'beta'] }, scripted: { tools: ['gamma'], mode: 'code' } } },
        globex: { toolsets: { secret: { tools: ['alpha'] } } },
      },
    },
    process.cwd(),
    undefined,
  );
  const tools = [tool('alpha'), tool('beta'), tool('gamma')];
  return buildSnapshot(
    config,
    undefined,
    {
      log: silentLog,
      env: {},
      providerSpecs: () => [{ key: 'f', create: () => ({ kind: 'function', tools: () => tools }) }],
      policyDeps: makeDeps(),
      builtinPolicies,
      registryTools: [],
      onShadowed: () => undefined,
    },
    () => undefined,
  );
}

function pools(userProvider?: UserToolProvider) {
  const hosts: string[] = [];
  const codeMode: CodeModeSource = {
    tools: () => [tool('run_script')],
    pool: (inner: Pool, tools: readonly Tool[]): Pool => ({ ...inner, tools, byName: new Map(tools.map((t) => [t.name, t])) }),
  };
  const host = (toolset: { name: string }): ToolsetHost => {
    hosts.push(toolset.name);
    return { poolFor: vi.fn(), execute: vi.fn(), holdSlot: async () => ({ refused: 'no' }), maxArgumentBytes: 1024 };
  };
  const owner = new CallerPools({ log: silentLog, metrics: createMetrics(), audit: makeDeps().audit, validatorFor: createSchemaValidator(), userProvider, codeMode, toolsetHost: host });
  return { owner, hosts };
}

function ownTools(behaviour: (p: Principal) => Promise<readonly Tool[]>) {
  const toolsFor = vi.fn(behaviour);
  return { provider: { kind: 'user-mcp' as const, toolsFor }, toolsFor };
}

const names = (pool: Pool): string[] => pool.tools.map((t) => t.name);

describe('CallerPools', () => {
  it('refuses a tenant configured nowhere with the unknown-tenant error', async () => {
    const snap = await snapshot();
    await expect(pools().owner.poolFor(snap, principal({ tenant: 'nobody' }), 'default')).rejects.toBeInstanceOf(UnknownTenantError);
  });

  it("asks the store for the caller's own tools only for a name that can need them, and lists them in the pool", async () => {
    const snap = await snapshot();
    const list = [ownTool];
    const { provider, toolsFor } = ownTools(async () => list);
    const { owner } = pools(provider);
    const plain = await owner.scopeFor(snap, alice, 'default', ['alpha']);
    expect(toolsFor).not.toHaveBeenCalled();
    expect(names(plain.pool)).toEqual(['alpha', 'beta', 'gamma']);
    const own = await owner.scopeFor(snap, alice, 'default', [ownTool.name]);
    expect(toolsFor).toHaveBeenCalledTimes(1);
    expect(names(own.pool)).toContain(ownTool.name);
    // A listing always shows them.
    expect(names(await owner.poolFor(snap, alice, 'default'))).toContain(ownTool.name);
  });

  it('leaves the caller\'s own tools out, and says so, while the store cannot list them; other errors pass', async () => {
    const snap = await snapshot();
    const down = pools(ownTools(async () => Promise.reject(storeUnavailable('list servers', new Error('ECONNREFUSED')))).provider).owner;
    const scope = await down.scopeFor(snap, alice, 'default', [ownTool.name]);
    expect(scope.userToolsUnavailable).toBe(true);
    expect(names(scope.pool)).toEqual(['alpha', 'beta', 'gamma']);
    const broken = pools(ownTools(async () => Promise.reject(new Error('bug'))).provider).owner;
    await expect(broken.scopeFor(snap, alice, 'default', [ownTool.name])).rejects.toThrow('bug');
  });

  it("keeps one execution scope per pool, and narrows to a toolset; another tenant's toolset is as unknown as none", async () => {
    const snap = await snapshot();
    const { owner } = pools();
    const first = await owner.scopeFor(snap, alice, 'default', ['alpha']);
    expect(await owner.scopeFor(snap, alice, 'default', ['beta'])).toBe(first);
    const subset = await owner.scopeFor(snap, alice, 'default', ['alpha'], 'ab');
    expect(names(subset.pool)).toEqual(['alpha', 'beta']);
    expect(subset).not.toBe(first);
    const unknown = await owner.poolFor(snap, alice, 'default', 'nothing').catch((error: unknown) => error);
    const foreign = await owner.poolFor(snap, alice, 'default', 'secret').catch((error: unknown) => error);
    expect(unknown).toMatchObject({ code: 'TG_NOT_FOUND', statusCode: 404 });
    expect(foreign).toMatchObject({ code: 'TG_NOT_FOUND', statusCode: 404 });
    expect((foreign as Error).message.replace('secret', 'X')).toBe((unknown as Error).message.replace('nothing', 'X'));
  });

  it('answers a scope with a promise on the warm path too: an unknown toolset or tenant rejects, never throws', async () => {
    const snap = await snapshot();
    const { owner } = pools();
    await owner.scopeFor(snap, alice, 'default', ['alpha']);
    // The tenant is compiled now: the scope is found without waiting, and its failures still come as rejections.
    let pending: Promise<unknown> | undefined;
    expect(() => (pending = owner.scopeFor(snap, alice, 'default', ['alpha'], 'nothing'))).not.toThrow();
    await expect(pending).rejects.toMatchObject({ code: 'TG_NOT_FOUND' });
    await expect(owner.scopeFor(snap, principal({ tenant: 'nobody' }), 'default', ['alpha'])).rejects.toBeInstanceOf(UnknownTenantError);
  });

  it("serves a code-mode toolset's listing through the injected source (its host made once) and its scripts' view as the plain subset", async () => {
    const snap = await snapshot();
    const { owner, hosts } = pools();
    expect(names(await owner.poolFor(snap, alice, 'default', 'scripted'))).toEqual(['run_script']);
    expect(names(await owner.poolFor(snap, alice, 'default', 'scripted'))).toEqual(['run_script']);
    expect(hosts).toEqual(['scripted']);
    expect(names(await owner.poolFor(snap, alice, 'default', 'scripted', 'scripted'))).toEqual(['gamma']);
  });
});
