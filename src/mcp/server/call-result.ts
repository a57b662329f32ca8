// A finished call as an MCP CallToolResult (docs/architecture.md#mcp-endpoint).
import type { CallToolResult } from '@modelcontextprotocol/server';
import { mcpContentOf } from '../../call/mcp-content.js';
import type { ToolResult } from '../../call/types.js';

/**
 * The model-readable output as one text block (never the trace), failures as isError; a successful
 * call to an MCP upstream sends the upstream's own content blocks and structuredContent instead, when
 * they fit the tool's `maxResultChars` (otherwise the cut `output`, as the REST API answers).
 */
export function toCallToolResult(result: ToolResult): CallToolResult {
  const connect = connectionUrlOf(result);
  if (connect !== undefined) {
    // An MCP client has no trace to read: the connect link rides in the error itself, for the human to open.
    return {
      content: [{ type: 'text', text: result.output }, { type: 'text', text: `Connect your account, then call again: ${connect}` }],
      isError: true,
      _meta: { 'toolgate/authorizationUrl': connect },
    };
  }
  const passthrough = result.ok ? mcpContentOf(result) : undefined;
  return {
    // The blocks were validated by the SDK client that received them from the upstream.
    content: passthrough ? (passthrough.content as CallToolResult['content']) : [{ type: 'text', text: result.output }],
    ...(passthrough?.structuredContent !== undefined ? { structuredContent: { ...passthrough.structuredContent } } : {}),
    isError: !result.ok,
    ...(result.approvalId ? { _meta: { 'toolgate/approvalId': result.approvalId, 'toolgate/status': result.status } } : {}),
  };
}

/** The authorizationUrl of a CONNECTION_REQUIRED result (docs/security-model.md#upstream-identity), if it has one. */
export function connectionUrlOf(result: ToolResult): string | undefined {
  if (result.error?.errorType !== 'CONNECTION_REQUIRED' || typeof result.trace !== 'object' || result.trace === null || !('authorizationUrl' in result.trace)) return undefined;
  const url = result.trace.authorizationUrl;
  return typeof url === 'string' ? url : undefined;
}

/** A CONNECTION_REQUIRED result's connect URL and the service it names (for URL-mode elicitation), if it has one. */
export function connectionOf(result: ToolResult): { connectUrl?: string; service?: string } {
  const connectUrl = connectionUrlOf(result);
  if (connectUrl === undefined) return {};
  const service = (result.trace as { service?: unknown }).service;
  return { connectUrl, ...(typeof service === 'string' ? { service } : {}) };
}
