// Admin surface over the MCP providers of a snapshot: accept a held (changed) tool definition.
import type { ToolProvider } from '../registry/provider.js';
import type { HeldToolInfo, McpProvider } from './mcp-provider.js';

export function isMcpProvider(provider: ToolProvider): provider is McpProvider {
  const candidate = provider as Partial<McpProvider>;
  return typeof candidate.accept === 'function' && typeof candidate.heldTools === 'function';
}

/** Accepts the changed definition of the held tool exposed as `name`; the tool's info, or undefined when none is held. */
export function acceptHeldTool(providers: Iterable<ToolProvider>, name: string): HeldToolInfo | undefined {
  for (const provider of providers) {
    if (!isMcpProvider(provider)) continue;
    const held = provider.heldTools().find((entry) => entry.name === name);
    if (!held) continue;
    return provider.accept(name) ? held : undefined;
  }
  return undefined;
}
