import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Tool as McpTool } from '@modelcontextprotocol/client';
import { boundServerListing, DEFAULT_USER_CATALOG_LIMITS, withinCatalogBytes } from '../../../../src/mcp/user/catalog-limits.js';
import { testConfig } from '../../../helpers/build.js';

const log = pino({ level: 'silent' });
const tool = (name: string, description = 'd', properties: object = {}): McpTool => ({ name, description, inputSchema: { type: 'object', properties } as McpTool['inputSchema'] });

describe("bounds on a user's own MCP catalog", () => {
  it('match the config defaults', () => {
    const { maxToolsPerServer, maxDescriptionChars, maxSchemaBytes, maxCatalogBytes } = testConfig().tenants.acme!.userMcp;
    expect({ maxToolsPerServer, maxDescriptionChars, maxSchemaBytes, maxCatalogBytes }).toEqual(DEFAULT_USER_CATALOG_LIMITS);
  });

  it('keeps the first tools of a server, cuts descriptions and titles, leaves out a tool whose schemas are too large, and weighs each', () => {
    const limits = { ...DEFAULT_USER_CATALOG_LIMITS, maxToolsPerServer: 3, maxDescriptionChars: 10, maxSchemaBytes: 100 };
    const kept = boundServerListing(
      [tool('a', 'x'.repeat(50)), tool('big', 'd', { p: { type: 'string', description: 'y'.repeat(200) } }), { ...tool('c'), title: 't'.repeat(30) }, tool('d')],
      limits,
      'user_x_service_s',
      log,
    );
    expect(kept.map(({ upstream }) => upstream.name)).toEqual(['a', 'c']);
    expect(kept[0]!.upstream.description).toBe(`${'x'.repeat(9)}…`);
    expect(kept[1]!.upstream.title).toHaveLength(10);
    expect(kept[0]!.bytes).toBe(JSON.stringify(kept[0]!.upstream.inputSchema).length + 1 + 10);
  });

  it("leaves out the tools past maxCatalogBytes across the user's servers, oldest registration first", () => {
    const entry = (name: string, bytes: number) => ({ tool: name, bytes });
    expect(withinCatalogBytes([[entry('a', 40), entry('b', 40)], [entry('c', 30), entry('d', 10)]], 90, log)).toEqual(['a', 'b', 'd']);
  });
});
