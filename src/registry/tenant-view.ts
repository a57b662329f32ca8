import { mergeBindings } from '../bindings/merge.js';
import type { CedarEngine } from '../cedar/engine.js';
import { compileBindingRules, type BindingRules } from '../bindings/rules.js';
import type { TenantConfig } from '../config/types.js';
import type { AccessDecision, Tool, ToolMode } from '../call/types.js';
import type { Principal } from '../call/principal.js';
import { compileGlobs, type NameMatcher } from '../patterns/name-globs.js';

export const TOOL_SEARCH_NAME = 'tool_search';

/**
 * The three tools a code-mode toolset is served as (docs/code-mode.md). Like `tool_search` they are the
 * gateway's own and not opt-in; every call a script makes is checked on its own.
 */
export const CODE_MODE_TOOL_NAMES: ReadonlySet<string> = new Set(['search_tools', 'describe_tools', 'run_script']);
/** The gateway's own tools (tool_search, the code-mode tools): never opt-in, and each call they make is checked on its own. */
export const isGatewayTool = (tool: Tool): boolean => tool.source === 'builtin' && (tool.name === TOOL_SEARCH_NAME || CODE_MODE_TOOL_NAMES.has(tool.name));

/** A named subset of a tenant's pool (a virtual server): it narrows what the caller may see and call, never widens it. */
export interface Toolset {
  readonly name: string;
  readonly description: string;
  readonly includes: NameMatcher;
  /** `code`: served as search_tools, describe_tools and run_script over the subset. */
  readonly mode: 'tools' | 'code';
  readonly sandbox: TenantConfig['toolsets'][string]['sandbox'];
}

interface RoleRule {
  allow: NameMatcher | undefined;
  deny: NameMatcher;
}

/**
 * One tenant's exposure rules, compiled once per config snapshot. `admits` is the narrowing chain of
 * docs/architecture.md#catalog-and-pools for a single tool; the pool applies it to the catalog, the access policy re-applies it per call.
 */
export interface TenantView {
  readonly id: string;
  readonly config: TenantConfig;
  admits(tool: Tool, principal: Principal, mode: ToolMode): AccessDecision;
  /**
   * True when the tenant has the tool at all: not disabled, inside its `tools.allow` globs, from a source
   * it uses (its built-ins, `functions`, `mcpServices`). What `admits` adds on top — the tenant's deny
   * globs, role rules, mode — only says whether this caller may use it now. Calls to a tool the tenant
   * does not have answer exactly as an unknown name (src/registry/resolve.ts).
   */
  reaches(tool: Tool): boolean;
  effectiveMode(requested: ToolMode): ToolMode;
  /** Binding keys the model must never see for this tool (tool templates + tenant bindings). */
  boundKeys(tool: Tool): readonly string[];
  /** The tenant's binding rules, which bind-arguments applies (src/bindings/rules.ts). */
  readonly bindings: BindingRules;
  /** The tenant's own toolset of that name; another tenant's toolsets do not exist here. */
  toolset(name: string): Toolset | undefined;
  /** The tenant's Cedar policies (`cedar`), when it has any: `admits` asks them last, the cedar policy per call. */
  readonly cedar: CedarEngine | undefined;
}

const ALLOWED: AccessDecision = { ok: true };
const NOT_ALLOWED: AccessDecision = { ok: false, reason: 'tool is not allowed for this tenant' };

const NO_SERVICES: ReadonlySet<string> = new Set();
const NO_TOOLSETS: ReadonlyMap<string, Toolset> = new Map();

export function createTenantView(id: string, config: TenantConfig, cedar?: CedarEngine): TenantView {
  const allow = compileGlobs(config.tools.allow);
  const deny = compileGlobs(config.tools.deny);
  const functions = compileGlobs(config.functions);
  const builtins = config.builtins === 'all' ? () => true : compileGlobs(config.builtins);
  // Most tenants name no services and no toolsets: they share the empty ones (~0.3 KiB each otherwise).
  const services: ReadonlySet<string> = config.mcpServices.length > 0 ? new Set(config.mcpServices) : NO_SERVICES;
  // Bindings keyed by tool name or glob, from `bindings` and from the bind-arguments policy options,
  // compiled once: the policy applies these same rules, so a bound key can never stay visible to the model.
  const bindings = compileBindingRules(mergeBindings(config.bindings, config.policies['bind-arguments']));
  const toolsetEntries = Object.entries(config.toolsets);
  const toolsets: ReadonlyMap<string, Toolset> =
    toolsetEntries.length > 0 ? new Map(toolsetEntries.map(([name, set]) => [name, { name, description: set.description, includes: compileGlobs(set.tools), mode: set.mode, sandbox: set.sandbox }])) : NO_TOOLSETS;
  const roleRules = new Map<string, RoleRule>(
    Object.entries(config.roles).map(([role, rule]) => [role, { allow: rule.allow ? compileGlobs(rule.allow) : undefined, deny: compileGlobs(rule.deny) }]),
  );

  function sourceAllows(tool: Tool): boolean {
    switch (tool.source) {
      case 'builtin':
        // tool_search (whenever a deferred tool is listed) and the code-mode tools are not opt-in.
        return isGatewayTool(tool) || builtins(tool.name);
      case 'function':
      case 'rag':
        return functions(tool.name);
      case 'global-mcp':
        return tool.service !== undefined && services.has(tool.service);
      case 'user-mcp':
        return config.userMcp.enabled;
      case 'local-mcp':
        return true;
    }
  }

  // An own arrow, not a method: name resolution holds it as is (no `this`).
  const reaches = (tool: Tool): boolean => tool.permission !== 'deny' && allow(tool.name) && sourceAllows(tool);

  return {
    id,
    config,
    reaches,
    toolset: (name) => toolsets.get(name),
    effectiveMode: (requested) => (config.mode === 'readonly' ? 'readonly' : requested),
    admits(tool, principal, requestedMode) {
      if (tool.permission === 'deny') return { ok: false, reason: 'tool is disabled' };
      if (!allow(tool.name) || deny(tool.name)) return { ok: false, reason: 'tool is not allowed for this tenant' };
      for (const role of principal.roles) {
        const rule = roleRules.get(role);
        if (!rule) continue;
        if (rule.deny(tool.name) || (rule.allow && !rule.allow(tool.name))) {
          return { ok: false, reason: `tool is not allowed for role ${role}` };
        }
      }
      const mode = config.mode === 'readonly' ? 'readonly' : requestedMode;
      if (mode === 'readonly' && !tool.readOnly && !isGatewayTool(tool)) {
        return { ok: false, reason: 'tool is not read-only and the session is in readonly mode' };
      }
      if (!sourceAllows(tool)) return { ok: false, reason: 'tool source is not enabled for this tenant' };
      // Cedar last, and only narrowing: a tool listed when some call of it could be permitted
      // (docs/governance.md#cedar-listing). Refused in the words of a deny glob: no oracle of which rule held it back.
      if (cedar && !isGatewayTool(tool) && !cedar.listable(principal, tool, mode).allowed) return NOT_ALLOWED;
      return ALLOWED;
    },
    bindings,
    boundKeys: bindings.boundKeys,
    cedar,
  };
}
