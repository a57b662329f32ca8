// Admin surface over the MCP providers of a snapshot: accept a held (changed) tool definition.
import type { ToolProvider } from '../../registry/tool-provider.js';
import type { HeldToolInfo, McpProvider } from './mcp-provider.js';

export function isMcpProvider(provider: ToolProvider): provider is McpProvider {
  const candidate = provider as Partial<McpProvider>;
  return typeof candidate.accept === 'function' && typeof candidate.heldTools === 'function';
}

/**
 * Accepts the changed definition of the held tool exposed as `name` — held by this replica or, with a
 * shared store, by another one; the tool's info, or undefined when none is held.
 */
export async function acceptHeldTool(providers: Iterable<ToolProvider>, name: string): Promise<HeldToolInfo | undefined> {
  for (const provider of providers) {
    if (!isMcpProvider(provider)) continue;
    const accepted = await provider.accept(name);
    if (accepted) return accepted;
  }
  return undefined;
}
