// Bounds on what a user's own MCP server may put in front of the gateway (docs/security-model.md#user-catalog-bounds).
// Applied once per listing the server sends (and per change of the tenant's limits), never per request:
// everything the user's requests use afterwards is the bounded result.
import type { Tool as McpTool } from '@modelcontextprotocol/client';
import type { TenantConfig } from '../../config/types.js';
import type { Logger } from '../../call/types.js';

export type UserCatalogLimits = Pick<TenantConfig['userMcp'], 'maxToolsPerServer' | 'maxDescriptionChars' | 'maxSchemaBytes' | 'maxCatalogBytes'>;

/** The schema defaults (src/config/schema.ts), for a provider built without a config. */
export const DEFAULT_USER_CATALOG_LIMITS: UserCatalogLimits = Object.freeze({ maxToolsPerServer: 200, maxDescriptionChars: 2048, maxSchemaBytes: 32_768, maxCatalogBytes: 524_288 });

/** A listed tool as kept, with what it weighs (its JSON text: name, description, schemas). */
export interface SizedTool {
  upstream: McpTool;
  bytes: number;
}

const cut = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
const schemaBytes = (tool: McpTool): number => JSON.stringify(tool.inputSchema ?? {}).length + (tool.outputSchema ? JSON.stringify(tool.outputSchema).length : 0);

/**
 * One server's listing, bounded: the first `maxToolsPerServer` tools, descriptions cut at
 * `maxDescriptionChars`, and a tool whose schemas outweigh `maxSchemaBytes` left out. What is left out is
 * logged (by the user's service key, never its URL).
 */
export function boundServerListing(listed: readonly McpTool[], limits: UserCatalogLimits, service: string, log: Logger): SizedTool[] {
  if (listed.length > limits.maxToolsPerServer) {
    log.warn({ service, listed: listed.length, kept: limits.maxToolsPerServer }, 'user MCP server lists more tools than userMcp.maxToolsPerServer; the rest are left out');
  }
  const kept: SizedTool[] = [];
  for (const tool of listed.slice(0, limits.maxToolsPerServer)) {
    const schemas = schemaBytes(tool);
    if (schemas > limits.maxSchemaBytes) {
      log.warn({ service, tool: tool.name, bytes: schemas, max: limits.maxSchemaBytes }, 'user MCP tool left out: its schemas exceed userMcp.maxSchemaBytes');
      continue;
    }
    const description = tool.description === undefined ? undefined : cut(tool.description, limits.maxDescriptionChars);
    const title = tool.title === undefined ? undefined : cut(tool.title, limits.maxDescriptionChars);
    const upstream: McpTool = { ...tool, ...(description === undefined ? {} : { description }), ...(title === undefined ? {} : { title }) };
    kept.push({ upstream, bytes: schemas + tool.name.length + (description?.length ?? 0) + (title?.length ?? 0) });
  }
  return kept;
}

/**
 * A user's servers together (oldest registration first): tools past `maxCatalogBytes` in all are left out,
 * so what one user lists is bounded whatever the number of servers.
 */
export function withinCatalogBytes<T>(perServer: ReadonlyArray<ReadonlyArray<{ tool: T; bytes: number }>>, maxCatalogBytes: number, log: Logger): T[] {
  const kept: T[] = [];
  let total = 0;
  let dropped = 0;
  for (const entry of perServer.flat()) {
    if (total + entry.bytes > maxCatalogBytes) {
      dropped += 1;
      continue;
    }
    total += entry.bytes;
    kept.push(entry.tool);
  }
  if (dropped > 0) log.warn({ dropped, maxCatalogBytes }, "user MCP tools left out: the user's servers together exceed userMcp.maxCatalogBytes");
  return kept;
}
