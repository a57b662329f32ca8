import { canonicalJson, sha256Hex } from '../shared/canonical-json.js';
import type { Pool } from './pool.js';
import { TOOL_SEARCH_NAME, type Toolset } from './tenant-view.js';

/**
 * A toolset's view of a caller's pool: the pool's tools its globs match, in the pool's order. It only ever
 * narrows — a tool outside the caller's pool stays out, whatever the globs say. `tool_search` stays whenever
 * a deferred tool does; called through the toolset, it searches this subset (the pool its call resolved in).
 */
export function narrowPool(parent: Pool, toolset: Toolset): Pool {
  const kept = new Set(parent.tools.filter((tool) => tool.name !== TOOL_SEARCH_NAME && toolset.includes(tool.name)));
  const hasDeferred = [...kept].some((tool) => parent.isDeferred(tool));
  const tools = parent.tools.filter((tool) => (tool.name === TOOL_SEARCH_NAME ? hasDeferred : kept.has(tool)));
  return {
    tools,
    byName: new Map(tools.map((tool) => [tool.name, tool])),
    schemaOf: (tool) => parent.schemaOf(tool),
    isDeferred: (tool) => parent.isDeferred(tool),
    fingerprint: sha256Hex(canonicalJson([toolset.name, parent.fingerprint, tools.map((tool) => tool.name)])),
    toolset: { name: toolset.name, parent },
  };
}
