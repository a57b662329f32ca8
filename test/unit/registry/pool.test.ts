import { describe, expect, it, vi } from 'vitest';
import { resolveToolName } from '../../../src/registry/resolve.js';
import { isUserToolName, userToolName, userToolPrefix } from '../../../src/registry/user-names.js';
import { callNeedsOwnTools, createShadowReporter } from '../../../src/registry/pool.js';
import { createTenantView } from '../../../src/registry/tenant-view.js';
import { catalogOf, poolOf, principal, silentLog, tenantConfig, tool } from '../../helpers/registry.js';

const names = (pool: { tools: readonly { name: string }[] }) => pool.tools.map((t) => t.name);
const users = (sub = 'alice') => ({ ownPrefix: userToolPrefix(sub), isUserToolName });

describe('pool order', () => {
  const builtins = [tool('read_file', 'builtin'), tool('glob', 'builtin'), tool('write_file', 'builtin')];
  const tenant = tenantConfig({ builtins: 'all' });

  it('lists built-ins sorted by name, then every other tool sorted by name', () => {
    const pool = poolOf(catalogOf([tool('zeta'), ...builtins, tool('alpha', 'global-mcp', { service: 's' }), tool('mid', 'local-mcp')]), tenantConfig({ builtins: 'all', mcpServices: [] }));
    expect(names(pool)).toEqual(['glob', 'read_file', 'write_file', 'mid', 'zeta']);
  });

  it('keeps the built-ins and the listing prefix when a tool sorting between two built-ins is added', () => {
    const before = poolOf(catalogOf([...builtins, tool('aaa')]), tenant);
    const after = poolOf(catalogOf([...builtins, tool('aaa'), tool('m_between', 'local-mcp'), tool('h_between')]), tenant);
    expect(names(after).slice(0, 4)).toEqual(names(before));
    expect(names(after)).toEqual(['glob', 'read_file', 'write_file', 'aaa', 'h_between', 'm_between']);
  });

  it('gives equal pools equal fingerprints and different pools different ones', () => {
    const a = poolOf(catalogOf([tool('x'), tool('y')]), tenant);
    const b = poolOf(catalogOf([tool('y'), tool('x')]), tenant);
    const c = poolOf(catalogOf([tool('x')]), tenant);
    expect(a.fingerprint).toBe(b.fingerprint);
    expect(a.fingerprint).not.toBe(c.fingerprint);
  });
});

describe('precedence and shadowing', () => {
  it('lets a built-in beat a same-named function tool and logs the shadowing once', () => {
    const warn = vi.fn();
    const count = vi.fn();
    const report = createShadowReporter({ ...silentLog, warn } as never, count);
    const catalog = catalogOf([tool('read_file', 'function'), tool('read_file', 'builtin')]);
    const tenant = tenantConfig({ builtins: ['read_file'] });
    const first = poolOf(catalog, tenant, { onShadowed: report });
    poolOf(catalog, tenant, { onShadowed: report });
    expect(first.byName.get('read_file')?.source).toBe('builtin');
    expect(first.tools.filter((t) => t.name === 'read_file')).toHaveLength(1);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toMatchObject({ tool: 'read_file', winner: 'builtin', loser: 'function' });
    expect(count).toHaveBeenCalledTimes(1);
  });

  it('resolves the same name to each source in turn as higher ones are removed', () => {
    const sources = ['builtin', 'user-mcp', 'local-mcp', 'function', 'global-mcp'] as const;
    const tenant = tenantConfig({ builtins: 'all', mcpServices: ['g'] });
    for (let i = 0; i < sources.length; i += 1) {
      const remaining = sources.slice(i);
      const userTools = remaining.includes('user-mcp') ? [tool('dup', 'user-mcp')] : [];
      const catalogTools = remaining.filter((s) => s !== 'user-mcp').map((s) => tool('dup', s, { service: s === 'global-mcp' ? 'g' : undefined }));
      const pool = poolOf(catalogOf(catalogTools), tenant, { userTools });
      expect(pool.byName.get('dup')?.source).toBe(sources[i]);
    }
  });
});

describe('aliases', () => {
  const catalog = catalogOf([tool('get_weather', 'function', { aliases: ['weather'] }), tool('secret_tool', 'function', { aliases: ['weather_admin'] }), tool('weather_admin')]);
  const tenant = tenantConfig({ tools: { deny: ['secret_tool', 'weather_admin'] } });
  const pool = poolOf(catalog, tenant);
  const reaches = createTenantView('t', tenant).reaches;

  it('resolves an alias of a visible tool and reports resolvedFrom', () => {
    expect(resolveToolName('weather', pool, catalog, users(), reaches)).toMatchObject({ ok: true, resolvedFrom: 'weather', tool: { name: 'get_weather' } });
  });

  it("refuses a primary name the tenant's own deny rules hide instead of masking it with an alias", () => {
    expect(resolveToolName('weather_admin', pool, catalog, users(), reaches)).toMatchObject({ ok: false, errorType: 'PERMISSION_DENIED' });
    expect(resolveToolName('secret_tool', pool, catalog, users(), reaches)).toMatchObject({ ok: false, errorType: 'PERMISSION_DENIED' });
  });

  it('answers UNKNOWN_TOOL for a name nobody has', () => {
    expect(resolveToolName('nope', pool, catalog, users(), reaches)).toEqual({ ok: false, errorType: 'UNKNOWN_TOOL', message: 'unknown tool: nope' });
  });

  it("answers another user's tool prefix exactly as an unknown name, even one that starts like the caller's", () => {
    expect(resolveToolName('user_bob_tool_x', pool, catalog, users('alice'), reaches)).toEqual({ ok: false, errorType: 'UNKNOWN_TOOL', message: 'unknown tool: user_bob_tool_x' });
    expect(resolveToolName('user_1-2_tool_x', pool, catalog, users('1'), reaches)).toMatchObject({ errorType: 'UNKNOWN_TOOL' });
    expect(resolveToolName('user_alice_tool_x', pool, catalog, users('alice'), reaches)).toMatchObject({ errorType: 'UNKNOWN_TOOL' });
  });
});

describe('names the tenant can never reach (no oracle of what other tenants have)', () => {
  const catalog = catalogOf([
    tool('acme_only', 'function'),
    tool('shared_fn', 'function', { aliases: ['globex_secret'] }),
    tool('globex_secret', 'function'),
    tool('remote_tool', 'global-mcp', { service: 'svc_b' }),
    tool('outside_allow', 'function'),
    tool('disabled', 'function', { permission: 'deny' }),
    tool('bash', 'builtin'),
  ]);
  // Enables its own functions only; `outside_allow` is enabled but outside the allow globs.
  const tenant = tenantConfig({ functions: ['acme_only', 'shared_fn', 'outside_allow', 'disabled'], builtins: ['read_file'], tools: { allow: ['acme_*', 'shared_*', 'remote_*', 'globex_*', 'disabled', 'bash'] } });
  const reaches = createTenantView('t', tenant).reaches;
  const resolve = (name: string, options: Parameters<typeof poolOf>[2] = {}) => resolveToolName(name, poolOf(catalog, tenant, options), catalog, users(), reaches);
  const unknown = (name: string) => ({ ok: false, errorType: 'UNKNOWN_TOOL', message: `unknown tool: ${name}` });

  it.each([
    ['a service outside mcpServices', 'remote_tool'],
    ['a tool outside the allow globs', 'outside_allow'],
    ['a tool disabled for everyone', 'disabled'],
    ['a built-in the tenant does not enable', 'bash'],
  ])('answers %s exactly as a name nobody has', (_label, name) => {
    expect(catalog.byName.has(name)).toBe(true);
    expect(resolve(name)).toEqual(unknown(name));
    expect(resolve(`${name}_nobody_has_this`)).toEqual(unknown(`${name}_nobody_has_this`));
  });

  it("treats another tenant's function as an unknown name, alias lookup included", () => {
    // Unknown names fall through to the aliases of visible tools; so does a name only another tenant has.
    expect(resolve('globex_secret')).toMatchObject({ ok: true, tool: { name: 'shared_fn' }, resolvedFrom: 'globex_secret' });
    const withoutAlias = catalogOf([tool('acme_only', 'function'), tool('globex_secret', 'function')]);
    expect(resolveToolName('globex_secret', poolOf(withoutAlias, tenant), withoutAlias, users(), reaches)).toEqual(unknown('globex_secret'));
  });

  it('keeps PERMISSION_DENIED for a tool the tenant has but this caller may not use now (role, mode)', () => {
    const withRole = tenantConfig({ functions: ['acme_only'], roles: { viewer: { deny: ['acme_*'] } } });
    const viewer = principal({ roles: ['viewer'] });
    expect(resolveToolName('acme_only', poolOf(catalog, withRole, { principal: viewer }), catalog, users(), createTenantView('t', withRole).reaches)).toMatchObject({
      errorType: 'PERMISSION_DENIED',
    });
    expect(resolve('acme_only', { mode: 'readonly' })).toMatchObject({ errorType: 'PERMISSION_DENIED' });
  });
});

describe('narrowing', () => {
  const catalog = catalogOf([tool('read_docs', 'function', { readOnly: true }), tool('write_doc'), tool('create_ticket'), tool('bash', 'builtin')]);

  it('gives two tenants with different deny rules different pools from the same catalog', () => {
    const a = poolOf(catalog, tenantConfig({ tools: { deny: ['write_*'] }, builtins: 'all' }));
    const b = poolOf(catalog, tenantConfig({ tools: { allow: ['*'], deny: ['create_ticket', 'bash'] }, builtins: 'all' }));
    expect(names(a)).toEqual(['bash', 'create_ticket', 'read_docs']);
    expect(names(b)).toEqual(['read_docs', 'write_doc']);
  });

  it('strips every non-read-only tool in readonly mode, by header or tenant mode', () => {
    expect(names(poolOf(catalog, tenantConfig(), { mode: 'readonly' }))).toEqual(['read_docs']);
    expect(names(poolOf(catalog, tenantConfig({ mode: 'readonly' }), { mode: 'default' }))).toEqual(['read_docs']);
  });

  it('applies role rules inside the tenant', () => {
    const tenant = tenantConfig({ roles: { viewer: { deny: ['write_*', 'create_*'] } } });
    expect(names(poolOf(catalog, tenant, { principal: principal({ roles: ['viewer'] }) }))).toEqual(['read_docs']);
    expect(names(poolOf(catalog, tenant, { principal: principal({ roles: ['editor'] }) }))).toEqual(['create_ticket', 'read_docs', 'write_doc']);
  });

  it('keeps built-ins off unless the tenant lists them', () => {
    expect(names(poolOf(catalog, tenantConfig()))).not.toContain('bash');
    expect(names(poolOf(catalog, tenantConfig({ builtins: ['bash'] })))).toContain('bash');
  });

  it('shows a global MCP tool only to tenants allowing its service', () => {
    const globalCatalog = catalogOf([tool('g1', 'global-mcp', { service: 'svc' })]);
    expect(names(poolOf(globalCatalog, tenantConfig()))).toEqual([]);
    expect(names(poolOf(globalCatalog, tenantConfig({ mcpServices: ['svc'] })))).toEqual(['g1']);
  });

  it('narrows function tools by the tenant functions allowlist', () => {
    expect(names(poolOf(catalog, tenantConfig({ functions: ['read_*'] })))).toEqual(['read_docs']);
  });
});

describe('feature flags', () => {
  const flagged = [tool('stable'), tool('experimental_tool', 'function', { feature: 'experimentalTools' })];

  it('includes a flagged tool only while its flag is on, from config or env', () => {
    expect(catalogOf(flagged).tools.map((t) => t.name)).toEqual(['stable']);
    expect(catalogOf(flagged, { features: { experimentalTools: true } }).tools.map((t) => t.name)).toEqual(['stable', 'experimental_tool']);
    expect(catalogOf(flagged, { env: { TOOLGATE_FEATURE_EXPERIMENTALTOOLS: '1' } }).tools).toHaveLength(2);
    expect(catalogOf(flagged, { features: { experimentalTools: true }, env: { TOOLGATE_FEATURE_EXPERIMENTALTOOLS: 'off' } }).tools).toHaveLength(1);
  });
});

describe('deferred tools', () => {
  it('marks deferred tools and keeps their schema out of the listing', () => {
    const pool = poolOf(catalogOf([tool('lazy', 'function', { deferLoading: true, searchHint: 'lazy things' }), tool('eager')]), tenantConfig());
    expect(pool.isDeferred(pool.byName.get('lazy')!)).toBe(true);
    expect(pool.isDeferred(pool.byName.get('eager')!)).toBe(false);
  });

  it('defers every non-built-in tool once the pool exceeds the tenant threshold', () => {
    const tools = Array.from({ length: 5 }, (_, i) => tool(`t${i}`));
    const pool = poolOf(catalogOf([...tools, tool('read_file', 'builtin')]), tenantConfig({ deferThreshold: 3, builtins: 'all' }));
    expect(pool.tools.filter((t) => pool.isDeferred(t)).map((t) => t.name)).toEqual(['t0', 't1', 't2', 't3', 't4']);
  });
});

describe("which calls need the caller's own tools (callNeedsOwnTools)", () => {
  // The gateway lists a caller's own MCP tools (a store read) only for calls that need them; every other
  // name must resolve, defer and validate exactly as it would with them in the pool.
  const catalog = catalogOf([
    tool('read_file', 'builtin'),
    tool('tool_search', 'builtin'),
    tool('alpha'),
    tool('beta', 'global-mcp', { service: 's', aliases: ['b'] }),
    tool('gamma', 'local-mcp'),
    tool('user_bob_tool_x', 'local-mcp'),
  ]);
  const ownTools = [tool(userToolName('alice', 'notes'), 'user-mcp', { deferLoading: true }), tool(userToolName('alice', 'todo'), 'user-mcp')];
  const probes = [...catalog.tools.map((t) => t.name), ...ownTools.map((t) => t.name), 'b', 'missing', 'user_bob_tool_y', `${userToolPrefix('alice')}missing`, 'tool_search'];

  for (const [label, raw] of [
    ['without a deferThreshold', { builtins: 'all', mcpServices: ['s'] }],
    ['with a deferThreshold the own tools push the pool over', { builtins: 'all', mcpServices: ['s'], deferThreshold: 4 }],
  ] as const) {
    it(`answers every other name the same with or without them, ${label}`, () => {
      const config = tenantConfig(raw);
      const view = createTenantView('t', config);
      const without = poolOf(catalog, config);
      const withOwn = poolOf(catalog, config, { userTools: ownTools });
      const differing = probes.filter((name) => {
        const [a, b] = [resolveToolName(name, without, catalog, users(), view.reaches), resolveToolName(name, withOwn, catalog, users(), view.reaches)];
        if (!a.ok || !b.ok) return a.ok !== b.ok || (!a.ok && !b.ok && a.errorType !== b.errorType);
        return a.tool !== b.tool || without.isDeferred(a.tool) !== withOwn.isDeferred(b.tool) || JSON.stringify(without.schemaOf(a.tool)) !== JSON.stringify(withOwn.schemaOf(b.tool));
      });
      // Not vacuous: the own tools change something, and only names the rule sends to the store differ.
      expect(differing.length).toBeGreaterThan(0);
      for (const name of differing) expect(callNeedsOwnTools(view, name), name).toBe(true);
      expect(callNeedsOwnTools(view, 'alpha')).toBe('deferThreshold' in raw);
    });
  }
});

describe('config overrides', () => {
  it('applies glob overrides, then exact-name ones', () => {
    const catalog = catalogOf([tool('ev_echo'), tool('ev_add')], { overrides: { 'ev_*': { readOnly: true, maxResultChars: 10 }, ev_add: { maxResultChars: 20, aliases: ['plus'] } } });
    const [echo, add] = catalog.tools;
    expect(echo).toMatchObject({ readOnly: true, maxResultChars: 10 });
    expect(add).toMatchObject({ readOnly: true, maxResultChars: 20, aliases: ['plus'] });
  });
});

describe('bound keys', () => {
  const schema = { type: 'object', properties: { query: { type: 'string' }, filter: { type: 'object' }, scope: { type: 'string' } }, required: ['query', 'filter'] };
  const catalog = catalogOf([tool('kb_search', 'function', { inputSchema: schema, bindings: { filter: { tenant: '${principal.tenant}' } } }), tool('kb_other', 'function', { inputSchema: schema })]);

  it('removes tool bindings and tenant bindings (by name or glob) from the model-visible schema', () => {
    const pool = poolOf(catalog, tenantConfig({ bindings: { 'kb_*': { scope: 'acme' } } }));
    expect(pool.schemaOf(pool.byName.get('kb_search')!)).toEqual({ type: 'object', properties: { query: { type: 'string' } }, required: ['query'] });
    expect(pool.schemaOf(pool.byName.get('kb_other')!)).toEqual({ type: 'object', properties: { query: { type: 'string' }, filter: { type: 'object' } }, required: ['query', 'filter'] });
  });

  it('also removes keys bound through the bind-arguments policy options', () => {
    const pool = poolOf(catalog, tenantConfig({ policies: { 'bind-arguments': { bindings: { kb_other: { filter: { tenant: 'acme' } } } } } }));
    expect(Object.keys(pool.schemaOf(pool.byName.get('kb_other')!).properties as object)).toEqual(['query', 'scope']);
  });
});
