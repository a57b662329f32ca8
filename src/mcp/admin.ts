// Admin surface over the MCP providers of a snapshot: accept a held (changed) tool definition.
import type { ToolProvider } from '../registry/provider.js';
import type { HeldToolInfo, McpProvider } from './mcp-provider.js';

export function isMcpProvider(provider: ToolProvider): provider is McpProvider {
  const candidate = provider as Partial<McpProvider>;
  return typeof candidate.accept === 'function' && typeof candidate.heldTools === 'function';
}

export type AcceptOutcome = { ok: true; held: HeldToolInfo } | { ok: false; reason: 'not-held' | 'forbidden' };

/**
 * Accepts the changed definition of the held tool exposed as `name`. `mayAccept` decides whether the
 * admin asking may (a tenant admin only for services its tenant can reach).
 */
export function acceptHeldTool(providers: Iterable<ToolProvider>, name: string, mayAccept: (held: HeldToolInfo, provider: McpProvider) => boolean): AcceptOutcome {
  for (const provider of providers) {
    if (!isMcpProvider(provider)) continue;
    const held = provider.heldTools().find((entry) => entry.name === name);
    if (!held) continue;
    if (!mayAccept(held, provider)) return { ok: false, reason: 'forbidden' };
    return provider.accept(name) ? { ok: true, held } : { ok: false, reason: 'not-held' };
  }
  return { ok: false, reason: 'not-held' };
}
