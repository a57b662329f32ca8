import type { ToolContext } from '../call/types.js';
import { defineTool } from './define-tool.js';
import { nativeEntry } from './formats.js';
import type { Pool } from './pool.js';
import { searchPool } from './search.js';
import { TOOL_SEARCH_NAME } from './tenant-view.js';

export const SEARCH_LIMIT_MAX = 50;

/** `{query, limit?}`: the arguments of every search tool the gateway offers (tool_search, search_tools). */
export function searchInputSchema(defaultLimit: number) {
  return {
    type: 'object',
    properties: {
      query: { type: 'string', minLength: 1, maxLength: 500, description: 'Words describing the tool you need' },
      limit: { type: 'integer', minimum: 1, maximum: SEARCH_LIMIT_MAX, default: defaultLimit },
    },
    required: ['query'],
    additionalProperties: false,
  };
}

/** The flags of the gateway's own read-only tools (search, describe): safe to run concurrently and to retry. */
export const READ_ONLY_GATEWAY_TOOL = { source: 'builtin', readOnly: true, idempotent: true, isConcurrencySafe: () => true } as const;

/**
 * A call's context as the execution path makes it (src/call/call-context.ts): it names the pool the
 * call was resolved in — the caller's, or its subset in the toolset the call came through.
 */
export interface PoolContext {
  readonly pool: Pool;
}

const poolOf = (ctx: ToolContext): Pool | undefined => (ctx as ToolContext & Partial<PoolContext>).pool;

/**
 * The built-in `tool_search`: full schemas of the caller's matching tools, deferred ones included. It
 * searches the pool its call was resolved in, on the snapshot the call started on, so one tool serves
 * every pool and toolset.
 */
export function createToolSearchTool() {
  return defineTool({
    name: TOOL_SEARCH_NAME,
    description: 'Search the available tools by name or purpose and load the full schemas of deferred tools before calling them.',
    inputSchema: searchInputSchema(5),
    ...READ_ONLY_GATEWAY_TOOL,
    async handler(args, ctx) {
      const pool = poolOf(ctx);
      if (pool === undefined) throw new Error('tool_search runs only through the execution path, which names the pool it searches');
      const limit = typeof args.limit === 'number' ? args.limit : 5;
      const matches = searchPool(pool, String(args.query), limit).filter((tool) => tool.name !== TOOL_SEARCH_NAME);
      return { tools: matches.map((tool) => nativeEntry(pool, tool, true)) };
    },
  });
}
