import type { JsonObject, Logger, Tool, ToolMode } from '../call/types.js';
import type { Principal } from '../call/principal.js';
import { canonicalJson, sha256Hex } from '../shared/canonical-json.js';
import { sourcePrecedence, type Catalog } from './catalog.js';
import { TOOL_SEARCH_NAME, type TenantView } from './tenant-view.js';
import { isUserToolName } from './user-names.js';
import { visibleSchema } from './visible-schema.js';

/** One principal's view of the catalog: the winners only, in the stable listing order. */
export interface Pool {
  readonly tools: readonly Tool[];
  readonly byName: ReadonlyMap<string, Tool>;
  /** Model-visible schema of a pool tool (bound keys removed). */
  schemaOf(tool: Tool): Readonly<JsonObject>;
  isDeferred(tool: Tool): boolean;
  /** Hash of the pool's canonical content; equal pools give equal fingerprints in any process. */
  readonly fingerprint: string;
  /** Set when this pool is a toolset's subset of the caller's pool (`parent`). */
  readonly toolset?: { readonly name: string; readonly parent: Pool };
}

export interface ShadowReport {
  (name: string, winner: Tool, loser: Tool): void;
}

export interface PoolInput {
  catalog: Catalog;
  tenant: TenantView;
  principal: Principal;
  mode: ToolMode;
  userTools: readonly Tool[];
  onShadowed: ShadowReport;
}

const byName = (a: Tool, b: Tool): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * Narrow → resolve precedence → partition → sort → concatenate. Built-ins come first, each partition
 * sorted by name, so adding any other tool never reorders the built-ins (prompt-cache stability).
 */
export function assemblePool(input: PoolInput): Pool {
  const { catalog, tenant, principal, mode } = input;
  const winners = new Map<string, Tool>();
  const admit = (tool: Tool): void => {
    if (!tenant.admits(tool, principal, mode).ok) return;
    const current = winners.get(tool.name);
    if (!current) {
      winners.set(tool.name, tool);
      return;
    }
    const [winner, loser] = sourcePrecedence(tool) < sourcePrecedence(current) ? [tool, current] : [current, tool];
    winners.set(tool.name, winner);
    input.onShadowed(tool.name, winner, loser);
  };
  for (const tool of catalog.tools) admit(tool);
  for (const tool of input.userTools) admit(tool);

  const threshold = tenant.config.deferThreshold;
  const nonBuiltinCount = [...winners.values()].filter((tool) => tool.source !== 'builtin').length;
  const autoDefer = threshold !== undefined && nonBuiltinCount > threshold;
  const deferred = new Set<Tool>();
  for (const tool of winners.values()) {
    if (tool.source !== 'builtin' && (tool.deferLoading || autoDefer)) deferred.add(tool);
  }
  // tool_search exists only in pools that hold something to search for.
  if (deferred.size === 0) winners.delete(TOOL_SEARCH_NAME);

  const all = [...winners.values()];
  const tools = [...all.filter((t) => t.source === 'builtin').sort(byName), ...all.filter((t) => t.source !== 'builtin').sort(byName)];
  return poolOf(tools, deferred.size > 0 ? deferred : NOTHING_DEFERRED, tenant);
}

const NOTHING_DEFERRED: ReadonlySet<Tool> = new Set();

/**
 * The pool of its sorted tools. Apart from assemblePool's scope, so the pool's closures keep neither the
 * winners map nor the input; only schemas a tenant's bound keys change are kept (every other tool's is its
 * own): a pool per warm tenant held ~2 KiB of maps copying what `tools` says.
 */
function poolOf(tools: readonly Tool[], deferred: ReadonlySet<Tool>, tenant: TenantView): Pool {
  let changed: Map<Tool, Readonly<JsonObject>> | undefined;
  for (const tool of tools) {
    const schema = visibleSchema(tool.inputSchema, tenant.boundKeys(tool));
    if (schema !== tool.inputSchema) (changed ??= new Map()).set(tool, schema);
  }
  const fingerprint = sha256Hex(
    canonicalJson(
      tools.map((tool) => [tool.name, tool.source, tool.description, changed?.get(tool) ?? tool.inputSchema, tool.readOnly, tool.destructive, tool.aliases, deferred.has(tool), tool.searchHint ?? null, tool.outputSchema ?? null]),
    ),
  );
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  return {
    tools,
    byName,
    schemaOf: (tool) => changed?.get(tool) ?? (byName.get(tool.name) === tool ? tool.inputSchema : visibleSchema(tool.inputSchema, tenant.boundKeys(tool))),
    isDeferred: (tool) => deferred.has(tool),
    fingerprint,
  };
}

/**
 * Whether a call of `name` can resolve or validate differently once the caller's own MCP tools are in its
 * pool, so whether running it needs them listed (a store read, and the user's servers on a miss). Their
 * names are all in the user namespace, so they shadow nothing else; beyond their own names they change
 * only which tools are deferred (assemblePool): `tool_search` exists only while something is, and a
 * tenant that defers by count counts them. docs/architecture.md#catalog-and-pools
 */
export function callNeedsOwnTools(tenant: TenantView, name: unknown): boolean {
  if (typeof name !== 'string') return false;
  return isUserToolName(name) || name === TOOL_SEARCH_NAME || tenant.config.deferThreshold !== undefined;
}

/** Logs each shadowed (name, winner, loser) once per process, and counts every occurrence. */
export function createShadowReporter(log: Logger, count: (winner: Tool, loser: Tool) => void): ShadowReport {
  const logged = new Set<string>();
  return (name, winner, loser) => {
    const key = `${name}\u0000${winner.source}\u0000${loser.source}\u0000${loser.service ?? ''}`;
    if (logged.has(key)) return;
    logged.add(key);
    count(winner, loser);
    log.warn({ tool: name, winner: winner.source, loser: loser.source, loserService: loser.service }, 'tool shadowed by a higher-precedence source');
  };
}
