import { ConfigError } from '../config/interpolate.js';
import type { GatewayConfig, TenantConfig } from '../config/types.js';
import { inConfigFile } from '../config/error-location.js';
import { loadTenantCedar } from '../cedar/tenant.js';
import { canonicalJson } from '../shared/canonical-json.js';
import { changedTenantIds, compactOf, tenantIdView, type CompactTenants } from '../config/compact-tenants.js';
import type { BuiltinPolicies, PolicyDeps } from '../pipeline/types.js';
import { buildCatalog, type Catalog } from '../registry/catalog.js';
import { createFeatureGate } from '../registry/features.js';
import { createOverrideApplier } from '../registry/overrides.js';
import type { ShadowReport } from '../registry/pool.js';
import type { ToolProvider } from '../registry/tool-provider.js';
import type { Logger, Tool } from '../call/types.js';
import { checkTenantsInChild, type CheckOutcome } from './check-in-child.js';
import { compileTenantParts, type CompileConfig } from './compile-tenant.js';
import { TenantTable, type TenantParts, type TenantTableDeps } from './tenant-table.js';

// Below this many distinct tenant texts the start's check runs here. Measured (bench/results.md, ten31, Node 24): from
// 2,000 the check here left the gateway 18-40 MiB larger after ready than the check in a child (20,000: 64-76), at
// 500-1,000 1-10 MiB, and the child's own start cost 0.6-2 s.
const CHECK_IN_CHILD_MIN = 2_000;

/** A provider and the config it was built from: a reload reuses providers whose config did not change. */
export interface ProviderSpec {
  key: string;
  create: () => ToolProvider;
}

/**
 * Everything one config version decides (docs/architecture.md#config-snapshot-and-reload). Immutable: a
 * reload or a catalog change makes a new one; the pools derived from it are cached on it.
 */
export interface Snapshot {
  readonly config: GatewayConfig;
  readonly providers: ReadonlyMap<string, ToolProvider>;
  readonly catalog: Catalog;
  /** Its tenants, compiled on first use, each with the pools derived from it (src/snapshot/tenant-table.ts). */
  readonly tenants: TenantTable;
}

/** The tenants kept in the state store, as a snapshot reads them (src/tenants/records.ts). */
export interface StoredTenantSource {
  load: TenantTableDeps['loadStored'];
  revision: TenantTableDeps['storedRevision'];
  /** Which of `ids` the store holds a tenant of (read once, in order). */
  existing(ids: Iterable<string>): Promise<string[]>;
}

export interface SnapshotDeps {
  log: Logger;
  env: NodeJS.ProcessEnv;
  /** Builds the tool providers a config asks for (function, built-in, RAG, MCP…). */
  providerSpecs: (config: GatewayConfig) => ProviderSpec[];
  /** Store, approvals, audit sink and metrics shared by every tenant's policy chain. */
  policyDeps: PolicyDeps;
  /** The built-in policies each tenant's chain is made of (policies/index.ts). */
  builtinPolicies: BuiltinPolicies;
  /** The module (URL) exporting them as `builtinPolicies`: without it the start's check never runs in a child process. */
  builtinPoliciesModule?: string;
  /** The gateway's own tools in every catalog (`tool_search`). */
  registryTools: readonly Tool[];
  /** Told when a pool settles two same-named tools by precedence. */
  onShadowed: ShadowReport;
  /** Tenants created through the tenant API; none without it. */
  storedTenants?: StoredTenantSource;
}

/** One tenant's view and policy chain, as every snapshot compiles them. */
export async function compileTenant(id: string, tenant: TenantConfig, config: CompileConfig, deps: Pick<SnapshotDeps, 'builtinPolicies' | 'policyDeps'>, catalog?: Catalog): Promise<TenantParts> {
  // Cedar policies are validated against a schema typed from the catalog's tools (docs/governance.md#cedar-policies).
  const cedar = tenant.cedar && (await loadTenantCedar(id, tenant.cedar, catalog?.tools ?? [], config.baseDir, deps.policyDeps.metrics?.cedarDecision));
  return compileTenantParts(id, tenant, config, deps, cedar);
}

/**
 * A complete snapshot of `config`. Providers of `previous` with an unchanged config are carried over with
 * their connections; `onProviderChange` is subscribed on each provider started here. On a failure the
 * providers started here are closed and the error is thrown: the caller's snapshot keeps serving.
 */
export async function buildSnapshot(
  config: GatewayConfig,
  previous: Snapshot | undefined,
  deps: SnapshotDeps,
  onProviderChange: (provider: ToolProvider) => void,
): Promise<Snapshot> {
  // At start every tenant is new: read from the table as needed, not listed (at 100,000 file tenants a list of
  // every id, and a set of it, kept through the start's awaits counted toward what grew Node 24's young generation).
  const changedTenants = previous ? changedTenantIds(previous.config.tenants, config.tenants) : undefined;
  // Started first, so the child's own start and its check overlap the gateway's store check and providers.
  const inChild = previous ? undefined : startCheckInChild(config, deps);
  await refuseStoredIds(previous && changedTenants ? changedTenants.filter((id) => !Object.hasOwn(previous.config.tenants, id)) : tenantIdView(config.tenants), deps);
  const providers = new Map<string, ToolProvider>();
  const started: ToolProvider[] = [];
  try {
    for (const spec of deps.providerSpecs(config)) {
      const reused = previous?.providers.get(spec.key);
      if (reused) {
        providers.set(spec.key, reused);
        continue;
      }
      const provider = spec.create();
      started.push(provider);
      await provider.start?.();
      provider.onChange?.(() => onProviderChange(provider));
      providers.set(spec.key, provider);
    }
    const catalog = catalogFor(config, providers, deps);
    // Only the file tenants that changed are checked now (so a bad one refuses the start or the reload): each
    // distinct configuration compiled once and dropped. A changed tenant that was compiled is compiled again and
    // kept; every other tenant waits for its first request.
    const tenants = previous ? previous.tenants.derive(catalog, config) : new TenantTable(config, catalog, tenantTableDeps(deps));
    const warm = new Set(previous && changedTenants ? changedTenants.filter((id) => previous.tenants.isCompiled(id)) : []);
    await checkTenants(changedTenants?.filter((id) => !warm.has(id)), config, deps, catalog, inChild);
    await tenants.precompile(warm);
    return { config, providers, catalog, tenants };
  } catch (error) {
    // A start that failed before the child's answer was awaited: no child checks on for nothing.
    inChild?.stop.abort();
    await Promise.allSettled(started.map((provider) => provider.close?.()));
    throw inConfigFile(error, config.source);
  }
}

/** The same snapshot with its catalog rebuilt from its providers' tools now, and empty pool caches. */
export function withFreshCatalog(snapshot: Snapshot, deps: SnapshotDeps): Snapshot {
  const catalog = catalogFor(snapshot.config, snapshot.providers, deps);
  return { ...snapshot, catalog, tenants: snapshot.tenants.derive(catalog) };
}

function tenantTableDeps(deps: SnapshotDeps): TenantTableDeps {
  const stored = deps.storedTenants;
  return {
    log: deps.log,
    onShadowed: deps.onShadowed,
    compile: (id, tenant, config, catalog) => compileTenant(id, tenant, config, deps, catalog),
    loadStored: async (id, config) => stored?.load(id, config),
    storedRevision: async (id) => stored?.revision(id),
  };
}

/**
 * Compiles the file tenants of `ids` (undefined: all of them) as their first request would, keeping nothing: a
 * bad one throws, named by the first id holding it. Tenants of the same configuration (tenants made from one
 * template) compile once. `inChild`: the start's check under way in a child process (`startCheckInChild`).
 */
async function checkTenants(ids: readonly string[] | undefined, config: GatewayConfig, deps: Pick<SnapshotDeps, 'builtinPolicies' | 'policyDeps' | 'log'>, catalog: Catalog, inChild: ChildCheck | undefined): Promise<void> {
  const compact = compactOf(config.tenants);
  if (compact) return checkCompactTenants(compact, ids && new Set(ids), config, deps, catalog, inChild);
  const checked = new Set<string>();
  for (const id of ids ?? Object.keys(config.tenants)) {
    const shape = canonicalJson(config.tenants[id]);
    if (checked.has(shape)) continue;
    checked.add(shape);
    // With the catalog: a tenant's Cedar schema is typed from its tools' arguments, as at its first request.
    await compileTenant(id, config.tenants[id]!, config, deps, catalog);
  }
}

/**
 * `checkTenants` over a table of texts, in its order, each tenant made afresh (not looked up by id nor
 * remembered, so its objects die young). At start (every tenant) a tenant whose text the table shares with an
 * earlier one is skipped and nothing is kept per tenant: at 100,000 tenants of different texts a set of every
 * text (~30 MiB) lived through the whole pass and was promoted (bench/results.md, ten28); with many distinct
 * texts the pass runs in a child process (src/snapshot/check-in-child.ts). On a reload the changed tenants are
 * told apart by their text, as an earlier tenant sharing it may not be one of them.
 */
async function checkCompactTenants(compact: CompactTenants, ids: ReadonlySet<string> | undefined, config: GatewayConfig, deps: Pick<SnapshotDeps, 'builtinPolicies' | 'policyDeps' | 'log'>, catalog: Catalog, inChild: ChildCheck | undefined): Promise<void> {
  const from = ids || !inChild ? 0 : await finishCheckInChild(compact, inChild, config, deps, catalog);
  const checked = new Set<string>();
  for (let position = from; position < compact.size; position += 1) {
    if (!ids && compact.sharesEarlierText(position)) continue;
    const id = compact.idAt(position);
    if (ids) {
      if (!ids.has(id)) continue;
      const text = compact.textAt(position);
      if (checked.has(text)) continue;
      checked.add(text);
    }
    await compileTenant(id, compact.freshTenantAt(position), config, deps, catalog);
  }
}

/** The start's check under way in a child process. */
interface ChildCheck {
  readonly outcome: Promise<CheckOutcome>;
  readonly started: number;
  readonly stop: AbortController;
}

/** The start's check in a child process, when the file's table has at least `CHECK_IN_CHILD_MIN` distinct texts. */
function startCheckInChild(config: GatewayConfig, deps: Pick<SnapshotDeps, 'builtinPoliciesModule' | 'policyDeps'>): ChildCheck | undefined {
  const compact = compactOf(config.tenants);
  if (!compact || deps.builtinPoliciesModule === undefined || !hasDistinctTexts(compact, CHECK_IN_CHILD_MIN)) return undefined;
  const started = performance.now();
  const stop = new AbortController();
  const outcome = checkTenantsInChild(compact, {
    policiesModule: deps.builtinPoliciesModule,
    baseDir: config.baseDir,
    guardrails: config.guardrails,
    auditEnabled: deps.policyDeps.audit.enabled,
    onStoreUnavailable: deps.policyDeps.onStoreUnavailable,
  }, { signal: stop.signal });
  return { outcome, started, stop };
}

/**
 * The child's answer; here only the tenants the child leaves to this process (Cedar, custom policies) and the
 * one that failed there, compiled again so that its error is this process's. Answers the position the check
 * goes on from here: the table's size when the child checked everything, 0 when it did not answer, the tenant
 * that failed there otherwise.
 */
async function finishCheckInChild(compact: CompactTenants, inChild: ChildCheck, config: GatewayConfig, deps: Pick<SnapshotDeps, 'builtinPolicies' | 'policyDeps' | 'log'>, catalog: Catalog): Promise<number> {
  const outcome = await inChild.outcome;
  // Checked here instead, not refused: the child's failure says nothing about the tenants, and each is still
  // checked before the gateway serves (at the memory cost the child saves).
  if ('unanswered' in outcome) {
    deps.log.warn({ reason: outcome.unanswered }, 'the file tenants could not be checked in a child process; checking them here');
    return 0;
  }
  const { answer } = outcome;
  deps.log.info({ ms: Math.round(performance.now() - inChild.started), leftHere: answer.inCaller.length, failedAt: answer.failedAt === -1 ? undefined : compact.idAt(answer.failedAt) }, 'file tenants checked in a child process');
  const last = answer.failedAt === -1 ? compact.size : answer.failedAt;
  for (const position of answer.inCaller) {
    if (position < last) await compileTenant(compact.idAt(position), compact.freshTenantAt(position), config, deps, catalog);
  }
  return last;
}

/** Whether at least `count` tenants of the table have a text no earlier tenant shares. */
function hasDistinctTexts(compact: CompactTenants, count: number): boolean {
  let distinct = 0;
  for (let position = 0; position < compact.size && distinct < count; position += 1) {
    if (!compact.sharesEarlierText(position)) distinct += 1;
  }
  return distinct >= count;
}

/** A file tenant whose id the store holds too is refused, naming it: one id, one source. */
async function refuseStoredIds(added: Iterable<string>, deps: SnapshotDeps): Promise<void> {
  if (!deps.storedTenants) return;
  const clashing = await deps.storedTenants.existing(added);
  if (clashing.length > 0) {
    const named = clashing.slice(0, 10).join(', ');
    throw new ConfigError(`config /tenants: ${clashing.length === 1 ? 'tenant' : 'tenants'} ${named}${clashing.length > 10 ? ', …' : ''} already kept in the state store (created through the tenant API); delete ${clashing.length === 1 ? 'it' : 'them'} there or rename in the file`);
  }
}

function catalogFor(config: GatewayConfig, providers: ReadonlyMap<string, ToolProvider>, deps: SnapshotDeps): Catalog {
  return buildCatalog([...providers.values()], {
    applyOverrides: createOverrideApplier(config.tools),
    featureEnabled: createFeatureGate(config.features, deps.env),
    registryTools: deps.registryTools,
    log: deps.log,
  });
}
