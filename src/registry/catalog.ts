import { SOURCE_PRECEDENCE, type Logger, type Tool } from '../call/types.js';
import { isToolName } from './tool-names.js';
import type { ToolProvider } from './tool-provider.js';

/** The full candidate set, before any principal-specific narrowing. */
export interface Catalog {
  readonly tools: readonly Tool[];
  /** Every tool with a given exposed name, highest routing precedence first. */
  readonly byName: ReadonlyMap<string, readonly Tool[]>;
  /** Every tool declaring a given alias. */
  readonly byAlias: ReadonlyMap<string, readonly Tool[]>;
}

export interface CatalogOptions {
  applyOverrides: (tool: Tool) => Tool;
  featureEnabled: (feature: string | undefined) => boolean;
  /** Registry-owned tools (tool_search), always candidates. */
  registryTools: readonly Tool[];
  log: Logger;
}

// RAG tools share the function tools' rank: `rag` only says what the tool is.
const precedence = (tool: Tool): number => SOURCE_PRECEDENCE.indexOf(tool.source === 'rag' ? 'function' : tool.source);

function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * `allTools()`: the only place the full candidate set is assembled. Config overrides and feature flags
 * are applied here so every consumer (listing, execution, MCP endpoint, search) sees the same tools.
 */
export function buildCatalog(providers: readonly ToolProvider[], options: CatalogOptions): Catalog {
  const tools: Tool[] = [];
  const seen = new Set<string>();
  const candidates = [...options.registryTools, ...providers.flatMap((provider) => provider.tools())];
  for (const raw of candidates) {
    const tool = options.applyOverrides(raw);
    if (!isToolName(tool.name)) {
      options.log.warn({ tool: tool.name, source: tool.source }, 'tool name does not match ^[A-Za-z0-9_-]{1,64}$; skipped');
      continue;
    }
    if (!options.featureEnabled(tool.feature)) continue;
    // Within one rank a name must be unique (a RAG tool and a function tool share one); across ranks precedence decides per pool.
    const key = `${precedence(tool)}\u0000${tool.name}`;
    if (seen.has(key)) {
      options.log.warn({ tool: tool.name, source: tool.source }, 'duplicate tool name within one routing rank; the first one is kept');
      continue;
    }
    seen.add(key);
    tools.push(tool);
  }
  const byName = new Map<string, Tool[]>();
  const byAlias = new Map<string, Tool[]>();
  for (const tool of tools) {
    pushTo(byName, tool.name, tool);
    for (const alias of tool.aliases) pushTo(byAlias, alias, tool);
  }
  for (const list of byName.values()) list.sort((a, b) => precedence(a) - precedence(b));
  return { tools, byName, byAlias };
}

export { precedence as sourcePrecedence };
