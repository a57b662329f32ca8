import type { ErrorType, Tool } from '../call/types.js';
import type { Catalog } from './catalog.js';
import type { Pool } from './pool.js';

export type Resolution =
  | { ok: true; tool: Tool; resolvedFrom?: string }
  | { ok: false; errorType: Extract<ErrorType, 'UNKNOWN_TOOL' | 'PERMISSION_DENIED'>; message: string };

export interface UserNamespace {
  /** The caller's own `user_<key>_tool_` prefix. */
  ownPrefix: string;
  /** True when the name is in some user's tool namespace. */
  isUserToolName(name: string): boolean;
}

/** True when the caller's tenant has the tool at all (TenantView.reaches), whatever this caller may do now. */
export type TenantReach = (tool: Tool) => boolean;

/** The one answer for a name the caller's tenant cannot reach, whether or not anyone else has it. */
function unknownTool(name: string): Resolution {
  return { ok: false, errorType: 'UNKNOWN_TOOL', message: `unknown tool: ${name}` };
}

/**
 * Name → tool for one principal (docs/security-model.md#tool-name-oracle). A primary name of a tool the tenant has but this caller may
 * not use now (role, mode, the tenant's own deny rules) is PERMISSION_DENIED, never masked by an alias.
 * A name the tenant can never reach — another tenant's function, a service outside its `mcpServices`,
 * another user's `user_…` tool — takes exactly the path of a name nobody has (alias lookup, then
 * UNKNOWN_TOOL), so answers never tell a tenant what others have.
 */
export function resolveToolName(name: string, pool: Pool, catalog: Catalog, users: UserNamespace, reaches: TenantReach): Resolution {
  const visible = pool.byName.get(name);
  if (visible) return { ok: true, tool: visible };
  // Another user's namespace: refused before any alias lookup (an alias must never spell someone's tool),
  // with the unknown-name answer whether or not that user registered such a tool.
  if (users.isUserToolName(name) && !name.startsWith(users.ownPrefix)) return unknownTool(name);
  // Through a toolset: a tool of the caller's own pool outside the subset (the caller may see it elsewhere, so no oracle).
  if (pool.toolset?.parent.byName.has(name)) {
    return { ok: false, errorType: 'PERMISSION_DENIED', message: `tool ${name} is not in toolset ${pool.toolset.name}` };
  }
  if (catalog.byName.get(name)?.some(reaches)) {
    return { ok: false, errorType: 'PERMISSION_DENIED', message: `tool ${name} is not available to this caller` };
  }
  const aliased = (catalog.byAlias.get(name) ?? []).map((tool) => pool.byName.get(tool.name)).find((tool) => tool !== undefined && tool.aliases.includes(name));
  if (aliased) return { ok: true, tool: aliased, resolvedFrom: name };
  return unknownTool(name);
}
