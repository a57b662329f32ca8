// An MCP upstream's content blocks and structuredContent as they were sent, carried beside a result's
// `output` for toolgate's own MCP endpoint (docs/architecture.md#mcp-endpoint). Kept under a symbol: spreads
// copy it, JSON never shows it, so the REST body keeps its contract (one string `output`, the rest in
// `trace`) and the audit log, which reads named fields only, never sees a blob.
import type { ToolOutput, ToolResult } from './types.js';

/** What the MCP endpoint sends instead of the single text block of `output`. */
export interface McpContent {
  /** The upstream's content blocks, unchanged (text, image, audio, resource, resource_link). */
  readonly content: readonly unknown[];
  readonly structuredContent?: Readonly<Record<string, unknown>>;
}

const MCP_CONTENT = Symbol('toolgate.mcpContent');

type Carrier = { [MCP_CONTENT]?: McpContent };

/** A handler's `{output, trace}` that also carries the upstream's content for the MCP endpoint. */
export function withMcpContent<T extends ToolOutput>(output: T, content: McpContent): T {
  (output as T & Carrier)[MCP_CONTENT] = content;
  return output;
}

export function mcpContentOf(value: ToolOutput | ToolResult): McpContent | undefined {
  return (value as (ToolOutput | ToolResult) & Carrier)[MCP_CONTENT];
}

/** Moves a handler's content onto its result when it fits the tool's `maxResultChars`, as `output` must. */
export function attachMcpContent(result: ToolResult, content: McpContent, maxChars: number): void {
  if (mcpContentChars(content, maxChars) <= maxChars) (result as ToolResult & Carrier)[MCP_CONTENT] = content;
}

/** Replaces (or, with undefined, drops) the content a result carries: the guardrails' rewrite of it (policies/guardrails.ts). */
export function replaceMcpContent(result: ToolResult, content: McpContent | undefined): void {
  (result as ToolResult & Carrier)[MCP_CONTENT] = content;
}

/**
 * Characters the content would put in front of a client: text, base64 data, embedded resource text or
 * blob, a link's URI, and the structured value as JSON. Stops counting once past `limit`.
 */
export function mcpContentChars(content: McpContent, limit: number): number {
  let total = 0;
  for (const block of content.content) {
    total += blockChars(block);
    if (total > limit) return total;
  }
  if (content.structuredContent !== undefined) total += JSON.stringify(content.structuredContent).length;
  return total;
}

function stringField(value: unknown, key: string): number {
  if (value === null || typeof value !== 'object') return 0;
  const field = (value as Record<string, unknown>)[key];
  return typeof field === 'string' ? field.length : 0;
}

function blockChars(block: unknown): number {
  if (block === null || typeof block !== 'object') return 0;
  const resource = (block as Record<string, unknown>).resource;
  return stringField(block, 'text') + stringField(block, 'data') + stringField(block, 'uri') + stringField(resource, 'text') + stringField(resource, 'blob') + stringField(resource, 'uri');
}
