// The web Request the SDK v2 entry is handed for a Fastify request (src/mcp/server/web-exchange.ts): every header
// as sent, a repeated one with each of its values, whatever shape Node's record has.
import { afterEach, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { toWebRequest } from '../../../../src/mcp/server/web-exchange.js';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

/** An app whose route answers the web Request's URL and headers; `symbolKey` adds a symbol key to the record first. */
async function app(symbolKey = false): Promise<FastifyInstance> {
  const server = Fastify({ logger: false });
  apps.push(server);
  server.post('/mcp/:toolset', async (request, reply) => {
    if (symbolKey) Object.defineProperty(request.headers, Symbol('plugin state'), { value: 'x', enumerable: true });
    const web = toWebRequest(request, reply, false);
    return { url: web.url, method: web.method, headers: Object.fromEntries(web.headers), setCookie: web.headers.getSetCookie() };
  });
  await server.ready();
  return server;
}

describe('toWebRequest', () => {
  it('hands over every header as sent', async () => {
    const response = await (await app()).inject({ method: 'POST', url: '/mcp/a?x=1', headers: { 'content-type': 'application/json', 'mcp-method': 'tools/call', host: 'gw.example' }, payload: '{}' });
    expect(response.json()).toMatchObject({ url: 'http://gw.example/mcp/a?x=1', method: 'POST', headers: { 'content-type': 'application/json', 'mcp-method': 'tools/call', host: 'gw.example' } });
  });

  it('keeps each value of a header Node holds as a list', async () => {
    // Node joins a repeated header into one string, but for set-cookie, which it keeps as a list.
    const response = await (await app()).inject({ method: 'POST', url: '/mcp/a', headers: { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'] }, payload: '{}' });
    expect(response.json<{ setCookie: string[] }>().setCookie).toEqual(['a=1', 'b=2']);
  });

  it('is not thrown off by a symbol key a plugin put on the record', async () => {
    const response = await (await app(true)).inject({ method: 'POST', url: '/mcp/a', headers: { 'content-type': 'application/json', 'mcp-name': 'echo' }, payload: '{}' });
    expect(response.statusCode).toBe(200);
    expect(response.json<{ headers: Record<string, string> }>().headers['mcp-name']).toBe('echo');
  });
});
