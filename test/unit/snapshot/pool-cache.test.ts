// PoolCache (src/snapshot/pool-cache.ts): the pools of one snapshot, built once and shared by every
// request on it; toolset subsets; code mode's pools through the source the root injects.
import { describe, expect, it, vi } from 'vitest';
import type { Tool } from '../../../src/call/types.js';
import type { ExecutionScope } from '../../../src/execution/execute.js';
import type { Pool } from '../../../src/registry/pool.js';
import { createTenantView } from '../../../src/registry/tenant-view.js';
import { PoolCache, type CodeModeSource, type ToolsetHost } from '../../../src/snapshot/pool-cache.js';
import { catalogOf, principal, tenantConfig, tool } from '../../helpers/registry.js';

const catalog = catalogOf([tool('alpha'), tool('beta'), tool('gamma', 'function', { readOnly: true })]);
const tenant = createTenantView(
  't',
  tenantConfig({ toolsets: { ab: { tools: ['alpha', 'beta'] }, scripted: { tools: ['gamma'], mode: 'code' } }, roles: { admin: { allow: ['*'] }, viewer: { allow: ['alpha'] } } }),
);
const names = (pool: Pool) => pool.tools.map((t) => t.name);
const host = (): ToolsetHost => ({ poolFor: vi.fn(), execute: vi.fn(), holdSlot: async () => ({ refused: 'no' }), maxArgumentBytes: 1024 });

function codeMode(): CodeModeSource & { made: number } {
  const source = {
    made: 0,
    tools: (): readonly Tool[] => {
      source.made += 1;
      return [tool('run_script')];
    },
    pool: (inner: Pool, tools: readonly Tool[]): Pool => ({ ...inner, tools, byName: new Map(tools.map((t) => [t.name, t])) }),
  };
  return source;
}

describe('PoolCache', () => {
  it('builds one shared pool per tenant, mode and role set, whatever the principal object or role order', () => {
    const cache = new PoolCache(catalog, () => undefined);
    const a = principal({ roles: ['x', 'y'] });
    const first = cache.shared(tenant, a, 'default');
    expect(cache.shared(tenant, a, 'default')).toBe(first);
    expect(cache.shared(tenant, principal({ roles: ['y', 'x'] }), 'default')).toBe(first);
    expect(cache.shared(tenant, principal({ roles: ['x'] }), 'default')).not.toBe(first);
    expect(cache.shared(tenant, a, 'readonly')).not.toBe(first);
    expect(names(cache.shared(tenant, a, 'readonly'))).toEqual(['gamma']);
  });

  it("keys a caller's pool with tools of its own by that list of tools", () => {
    const cache = new PoolCache(catalog, () => undefined);
    const own = [tool('u_alice__mine', 'user-mcp')];
    const pool = cache.withUserTools(tenant, principal(), 'default', own);
    expect(cache.withUserTools(tenant, principal(), 'default', own)).toBe(pool);
    expect(cache.withUserTools(tenant, principal(), 'default', [...own])).not.toBe(pool);
  });

  it("narrows a pool to a toolset's tools once, and serves a code-mode toolset as its source's pool, made once", () => {
    const cache = new PoolCache(catalog, () => undefined);
    const pool = cache.shared(tenant, principal(), 'default');
    const code = codeMode();
    const ab = tenant.toolset('ab');
    const scripted = tenant.toolset('scripted');
    if (!ab || !scripted) throw new Error('toolsets not compiled');
    const subset = cache.subset(pool, 't', ab, 'listed', code, host);
    expect(names(subset)).toEqual(['alpha', 'beta']);
    expect(cache.subset(pool, 't', ab, 'listed', code, host)).toBe(subset);
    expect(code.made).toBe(0);

    const listed = cache.subset(pool, 't', scripted, 'listed', code, host);
    expect(names(listed)).toEqual(['run_script']);
    expect(cache.subset(pool, 't', scripted, 'listed', code, host)).toBe(listed);
    expect(names(cache.subset(pool, 't', scripted, 'scripted', code, host))).toEqual(['gamma']);
    expect(code.made).toBe(1);
  });

  it('keeps the execution scope of a pool it was given, and none for another', () => {
    const cache = new PoolCache(catalog, () => undefined);
    const pool = cache.shared(tenant, principal(), 'default');
    const scope = { pool } as Partial<ExecutionScope> as ExecutionScope;
    expect(cache.keepScope(pool, scope)).toBe(scope);
    expect(cache.scopeOf(pool)).toBe(scope);
    expect(cache.scopeOf(cache.shared(tenant, principal(), 'readonly'))).toBeUndefined();
  });
});
