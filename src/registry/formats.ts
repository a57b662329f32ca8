import type { JsonObject, Tool } from '../types.js';
import type { Pool } from './pool.js';

export const LISTING_FORMATS = ['native', 'openai', 'anthropic', 'mcp'] as const;
export type ListingFormat = (typeof LISTING_FORMATS)[number];

const DEFERRED_SCHEMA: JsonObject = Object.freeze({ type: 'object', properties: {} });
const deferredNote = (tool: Tool): string =>
  `${tool.description}${tool.description ? ' ' : ''}(schema deferred: call tool_search${tool.searchHint ? ` — ${tool.searchHint}` : ''})`;

export interface NativeTool {
  name: string;
  description: string;
  inputSchema?: Readonly<JsonObject>;
  source: string;
  readOnly: boolean;
  destructive: boolean;
  aliases?: readonly string[];
  deferLoading?: true;
  searchHint?: string;
}

/** Full entry (search results, non-deferred listing entries). */
export function nativeEntry(pool: Pool, tool: Tool, full: boolean): NativeTool {
  const deferred = pool.isDeferred(tool);
  const entry: NativeTool = { name: tool.name, description: tool.description, source: tool.source, readOnly: tool.readOnly, destructive: tool.destructive };
  if (full || !deferred) entry.inputSchema = pool.schemaOf(tool);
  if (tool.aliases.length > 0) entry.aliases = tool.aliases;
  if (deferred) entry.deferLoading = true;
  if (tool.searchHint !== undefined) entry.searchHint = tool.searchHint;
  return entry;
}

export function mcpEntry(pool: Pool, tool: Tool): JsonObject {
  const deferred = pool.isDeferred(tool);
  return {
    name: tool.name,
    description: deferred ? deferredNote(tool) : tool.description,
    inputSchema: deferred ? DEFERRED_SCHEMA : pool.schemaOf(tool),
    annotations: { readOnlyHint: tool.readOnly, destructiveHint: tool.destructive },
  };
}

/** The listing body in one of the four client shapes (CONTRACT §5). */
export function formatPool(pool: Pool, format: ListingFormat): unknown {
  switch (format) {
    case 'native':
      return { tools: pool.tools.map((tool) => nativeEntry(pool, tool, false)) };
    case 'openai':
      return pool.tools.map((tool) => {
        const deferred = pool.isDeferred(tool);
        return {
          type: 'function',
          function: { name: tool.name, description: deferred ? deferredNote(tool) : tool.description, parameters: deferred ? DEFERRED_SCHEMA : pool.schemaOf(tool) },
        };
      });
    case 'anthropic':
      return pool.tools.map((tool) => {
        const deferred = pool.isDeferred(tool);
        return deferred
          ? { name: tool.name, description: deferredNote(tool), input_schema: DEFERRED_SCHEMA, defer_loading: true }
          : { name: tool.name, description: tool.description, input_schema: pool.schemaOf(tool) };
      });
    case 'mcp':
      return { tools: pool.tools.map((tool) => mcpEntry(pool, tool)) };
  }
}
