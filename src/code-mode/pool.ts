import { canonicalJson, sha256Hex } from '../shared/canonical-json.js';
import type { Pool } from '../registry/pool.js';
import type { Tool } from '../call/types.js';

/**
 * A code-mode toolset as the caller sees it: its three tools only. `toolset.parent` is the caller's whole
 * pool, as for any toolset, so calling one of its tools directly here is refused exactly as outside a
 * toolset; scripts reach the subset (`inner`) through run_script.
 */
export function codeModePool(inner: Pool, tools: readonly Tool[]): Pool {
  const parent = inner.toolset?.parent ?? inner;
  return {
    tools,
    byName: new Map(tools.map((tool) => [tool.name, tool])),
    schemaOf: (tool) => tool.inputSchema,
    isDeferred: () => false,
    fingerprint: sha256Hex(canonicalJson(['code', inner.fingerprint])),
    toolset: { name: inner.toolset?.name ?? '', parent },
  };
}
