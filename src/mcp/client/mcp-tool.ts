// An upstream MCP tool as a toolgate Tool: one defineTool per listed tool, handler → upstream client.
import type { Tool as McpTool } from '@modelcontextprotocol/client';
import { ToolError } from '../../call/tool-error.js';
import { defineTool } from '../../registry/define-tool.js';
import type { JsonObject, Tool, ToolSourceKind, ToolSpec } from '../../call/types.js';
import type { Principal } from '../../call/principal.js';
import type { ServiceCredentials } from '../../call/upstream-credential.js';
import { recordCredential } from '../../observability/tracing.js';
import { toToolOutput } from './result.js';
import type { CallOptions, UpstreamClient } from './upstream-client.js';
import { holdCredential } from './upstream-fetch.js';

export interface McpToolOptions {
  name: string;
  source: ToolSourceKind;
  service: string;
  client: UpstreamClient;
  /** Per-call headers for HTTP upstreams (resolved identity); may throw a ToolError to refuse the call. */
  headersFor?: (principal: Principal) => Record<string, string>;
  /** The service's OAuth credentials (`auth`): each call carries the one its principal gets. */
  credentials?: ServiceCredentials;
  /** Re-checked per call: a tool held out after the pool was built must still not run. */
  isHeld?: () => boolean;
  extra?: Partial<ToolSpec>;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
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
      const identity = options.headersFor?.(ctx.principal);
      if (!options.credentials) {
        // Assigned rather than spread in: no throwaway objects on the path of every call.
        const callOptions: CallOptions = { signal: ctx.signal, depth: ctx.depth, onProgress: ctx.onProgress };
        if (identity) callOptions.headers = identity;
        return toToolOutput(await client.callTool(upstream.name, args, callOptions));
      }
      const credential = await options.credentials.forCall(ctx.principal, ctx.signal);
      const held = holdCredential(credential.authorization);
      try {
        const result = await client.callTool(upstream.name, args, { signal: ctx.signal, depth: ctx.depth, onProgress: ctx.onProgress, headers: { ...identity, ...held.headers } });
        const output = toToolOutput(result);
        // Which identity the upstream saw, for the caller's trace and the audit: a hash prefix, never the token.
        return { ...output, trace: { ...(isObject(output.trace) ? output.trace : {}), credential: recordCredential(credential) } };
      } finally {
        held.release();
      }
    },
  });
}
