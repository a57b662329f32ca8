import type { ErrorType, Tool } from '../types.js';
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

/**
 * Name → tool for one principal (CONTRACT §3). A primary name of a tool outside the pool is refused,
 * never masked by an alias; aliases are accepted only for tools the principal can see.
 */
export function resolveToolName(name: string, pool: Pool, catalog: Catalog, users: UserNamespace): Resolution {
  const visible = pool.byName.get(name);
  if (visible) return { ok: true, tool: visible };
  if (users.isUserToolName(name) && !name.startsWith(users.ownPrefix)) {
    return { ok: false, errorType: 'PERMISSION_DENIED', message: `tool ${name} belongs to another user` };
  }
  if (catalog.byName.has(name)) {
    return { ok: false, errorType: 'PERMISSION_DENIED', message: `tool ${name} is not available to this caller` };
  }
  const aliased = (catalog.byAlias.get(name) ?? []).map((tool) => pool.byName.get(tool.name)).find((tool) => tool !== undefined && tool.aliases.includes(name));
  if (aliased) return { ok: true, tool: aliased, resolvedFrom: name };
  return { ok: false, errorType: 'UNKNOWN_TOOL', message: `unknown tool: ${name}` };
}
