// A session's side records (what its client declared at initialize) live and go with the session: many
// initializes leave no more of them than sessions stay live (maxPerPrincipal), DELETE takes its record with
// it, and an idle session's expires with it — on the memory store and on a throwaway Redis alike.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';
import { deleteRedisKeys, testRedisUrl } from '../helpers/redis.js';

const REDIS_URL = testRedisUrl();
const prefix = `tg-test-side-records:${randomBytes(6).toString('hex')}:`;
const stores: Array<[string, Record<string, unknown>]> = [['memory', { kind: 'memory' }]];
if (REDIS_URL) stores.push(['redis', { kind: 'redis', url: REDIS_URL, prefix }]);

afterAll(async () => {
  if (REDIS_URL) await deleteRedisKeys(REDIS_URL, prefix);
});

const INITIALIZES = 300;

describe.each(stores)("MCP sessions' side records on the %s store", (_kind, store) => {
  let app: FastifyInstance;
  afterAll(() => app?.close());

  const initialize = async (token: string): Promise<string> => {
    const response = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { ...bearer(token), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: { elicitation: {}, sampling: {} }, clientInfo: { name: 'flood', version: '1' } } },
    });
    expect(response.statusCode).toBe(200);
    return response.headers['mcp-session-id'] as string;
  };
  const records = async (): Promise<{ sessions: string[]; sides: string[] }> => {
    const keys = (await app.store.scan('mcp-session:')).map(({ key }) => key);
    return { sessions: keys.filter((key) => !key.endsWith(':client')), sides: keys.filter((key) => key.endsWith(':client')) };
  };

  it(`keeps no more side records than live sessions after ${INITIALIZES} initializes, and ends them with DELETE and with the idle timeout`, async () => {
    app = await buildTestApp(testConfig({ store, mcpServer: { maxPerPrincipal: 16, idleTimeoutMs: 2500 } }));
    const mallory = await signToken({ sub: 'mallory' });
    const ids: string[] = [];
    for (let i = 0; i < INITIALIZES; i += 1) ids.push(await initialize(mallory));
    const flooded = await records();
    expect(flooded.sessions).toHaveLength(16);
    expect(flooded.sides).toHaveLength(16);
    // The side records are the live sessions' own.
    expect(flooded.sides.map((key) => key.split(':').at(-2)).sort()).toEqual(ids.slice(-16).sort());

    const last = ids.at(-1)!;
    const ended = await app.inject({ method: 'DELETE', url: '/mcp', headers: { ...bearer(mallory), 'mcp-session-id': last } });
    expect(ended.statusCode).toBe(204);
    expect((await records()).sides.some((key) => key.includes(last))).toBe(false);

    // Idle past the timeout: records and side records expire together.
    await new Promise((resolve) => setTimeout(resolve, 2800));
    expect(await records()).toEqual({ sessions: [], sides: [] });
  }, 60_000);
});
