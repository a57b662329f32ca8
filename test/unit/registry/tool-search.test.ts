import { describe, expect, it } from 'vitest';
import type { Pool } from '../../../src/registry/pool.js';
import { createToolSearchTool, type PoolContext } from '../../../src/registry/tool-search.js';
import type { ToolContext } from '../../../src/call/types.js';
import { toolContext } from '../../fixtures/mcp/context.js';
import { catalogOf, poolOf, tenantConfig, tool } from '../../helpers/registry.js';

const search = createToolSearchTool();
const run = (ctx: ToolContext, query: string): Promise<unknown> => Promise.resolve(search.handler({ query }, ctx));
const withPool = (pool: Pool): ToolContext & PoolContext => ({ ...toolContext(), pool });
const found = (result: unknown): string[] => (result as { tools: { name: string }[] }).tools.map((entry) => entry.name);

describe('tool_search', () => {
  it('searches the pool named in its call context, whichever pool that is', async () => {
    const catalog = catalogOf([tool('get_weather'), tool('write_note')]);
    const everything = poolOf(catalog, tenantConfig());
    const weatherOnly = poolOf(catalog, tenantConfig({ tools: { allow: ['get_weather'] } }));
    expect(found(await run(withPool(everything), 'note'))).toEqual(['write_note']);
    expect(found(await run(withPool(weatherOnly), 'note'))).toEqual([]);
  });

  it('refuses to run without a pool in its context rather than guess one', async () => {
    await expect(run(toolContext(), 'note')).rejects.toThrow(/only through the execution path/);
  });
});
