// An upstream MCP tool as a toolgate Tool: one defineTool per listed tool, handler → upstream client.
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { ToolError } from '../execution/tool-error.js';
import { defineTool } from '../registry/define-tool.js';
import type { JsonObject, Principal, Tool, ToolSourceKind, ToolSpec } from '../types.js';
import { toToolOutput } from './result.js';
import type { UpstreamClient } from './upstream-client.js';

export interface McpToolOptions {
  name: string;
  source: ToolSourceKind;
  service: string;
  client: UpstreamClient;
  /** Per-call headers for HTTP upstreams (resolved identity); may throw a ToolError to refuse the call. */
  headersFor?: (principal: Principal) => Record<string, string>;
  /** Re-checked per call: a tool held out after the pool was built must still not run. */
  isHeld?: () => boolean;
  extra?: Partial<ToolSpec>;
}

export function toolFromMcp(upstream: McpTool, options: McpToolOptions): Tool {
  const { client } = options;
  const annotations = upstream.annotations ?? {};
  return defineTool({
    name: options.name,
    description: upstream.description ?? upstream.title ?? '',
    inputSchema: upstream.inputSchema as JsonObject,
    ...(upstream.outputSchema ? { outputSchema: upstream.outputSchema as JsonObject } : {}),
    source: options.source,
    service: options.service,
    // MCP hints when the upstream gives them; otherwise defineTool's fail-closed defaults.
    ...(typeof annotations.readOnlyHint === 'boolean' ? { readOnly: annotations.readOnlyHint } : {}),
    ...(typeof annotations.destructiveHint === 'boolean' ? { destructive: annotations.destructiveHint } : {}),
    ...options.extra,
    handler: async (args, ctx) => {
      if (options.isHeld?.()) {
        throw new ToolError('PERMISSION_DENIED', `${options.name}: upstream definition changed; held until an admin accepts it`);
      }
      const headers = options.headersFor?.(ctx.principal);
      const result = await client.callTool(upstream.name, args, { signal: ctx.signal, depth: ctx.depth, onProgress: ctx.onProgress, ...(headers ? { headers } : {}) });
      return toToolOutput(result);
    },
  });
}
