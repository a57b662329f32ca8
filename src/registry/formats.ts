import type { JsonObject, Tool } from '../call/types.js';
import { geminiParameters } from './gemini-schema.js';
import type { Pool } from './pool.js';
import { strictSchema } from './strict-schema.js';

export const LISTING_FORMATS = ['native', 'openai', 'openai-responses', 'anthropic', 'gemini', 'mcp'] as const;
export type ListingFormat = (typeof LISTING_FORMATS)[number];
/** The formats whose schemas can be listed in OpenAI's strict mode (`strict=true`). */
export const STRICT_FORMATS: readonly ListingFormat[] = ['openai', 'openai-responses'];

export interface ListingOptions {
  /** OpenAI formats: strict-mode schemas, and `strict: false` for a tool strict mode cannot express. */
  strict: boolean;
}

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

/** An MCP tools/list entry; an upstream's outputSchema is listed with its full schema, so clients can check structuredContent. */
export function mcpEntry(pool: Pool, tool: Tool): JsonObject {
  const deferred = pool.isDeferred(tool);
  const entry: JsonObject = {
    name: tool.name,
    description: deferred ? deferredNote(tool) : tool.description,
    inputSchema: deferred ? DEFERRED_SCHEMA : pool.schemaOf(tool),
  };
  if (!deferred && tool.outputSchema !== undefined) entry.outputSchema = tool.outputSchema;
  entry.annotations = { readOnlyHint: tool.readOnly, destructiveHint: tool.destructive };
  return entry;
}

/** A tool's OpenAI function fields; `strict` only when asked for (a deferred tool is never strict: its schema is not listed). */
function openaiFunction(pool: Pool, tool: Tool, options: ListingOptions): { name: string; description: string; parameters: Readonly<JsonObject>; strict?: boolean } {
  if (pool.isDeferred(tool)) return { name: tool.name, description: deferredNote(tool), parameters: DEFERRED_SCHEMA, ...(options.strict ? { strict: false } : {}) };
  const schema = pool.schemaOf(tool);
  if (!options.strict) return { name: tool.name, description: tool.description, parameters: schema };
  const strict = strictSchema(schema);
  return { name: tool.name, description: tool.description, parameters: strict ?? schema, strict: strict !== undefined };
}

/** The listing body in one of the client shapes (docs/api.md#listing-formats). */
export function formatPool(pool: Pool, format: ListingFormat, options: ListingOptions = { strict: false }): unknown {
  switch (format) {
    case 'native':
      return { tools: pool.tools.map((tool) => nativeEntry(pool, tool, false)) };
    case 'openai':
      return pool.tools.map((tool) => ({ type: 'function', function: openaiFunction(pool, tool, options) }));
    case 'openai-responses':
      // The Responses API's flat function tool; its `strict` is required (false unless strict=true made it strict).
      return pool.tools.map((tool) => {
        const fn = openaiFunction(pool, tool, options);
        return { type: 'function', ...fn, strict: fn.strict ?? false };
      });
    case 'gemini':
      return {
        functionDeclarations: pool.tools.map((tool) => {
          if (pool.isDeferred(tool)) return { name: tool.name, description: deferredNote(tool) };
          const parameters = geminiParameters(pool.schemaOf(tool));
          return parameters ? { name: tool.name, description: tool.description, parameters } : { name: tool.name, description: tool.description };
        }),
      };
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
