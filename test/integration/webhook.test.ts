import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';

/** A real HTTP upstream on loopback that records what reached it. */
let upstream: Server;
let seen: Array<{ url: string; headers: IncomingHttpHeaders; body: string }> = [];
let app: FastifyInstance;
let token: string;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      seen.push({ url: req.url ?? '', headers: req.headers, body });
      if (req.url?.startsWith('/slow')) {
        const timer = setTimeout(() => res.end('{}'), 3000);
        res.on('close', () => clearTimeout(timer));
        return;
      }
      if (req.url?.startsWith('/fail')) {
        res.statusCode = 500;
        res.end('database is down');
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ id: 'T-1', received: JSON.parse(body || '{}') }));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const schema = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'], additionalProperties: false };
  app = await buildTestApp(
    testConfig({
      functions: [
        { name: 'create_ticket', description: 'Create a ticket', inputSchema: schema, http: { url: `${base}/tickets`, headers: { 'x-service-token': 'svc-secret' } } },
        { name: 'slow_hook', inputSchema: schema, http: { url: `${base}/slow`, timeoutMs: 200 } },
        { name: 'failing_hook', inputSchema: schema, http: { url: `${base}/fail` } },
        { name: 'lookup', inputSchema: schema, http: { method: 'GET', url: `${base}/lookup` } },
      ],
    }),
  );
  token = await signToken();
});
afterAll(async () => {
  await app.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

const run = (name: string, args: unknown, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/v1/execute', headers: { ...bearer(token), ...headers }, payload: { name, arguments: args as object } });

describe('HTTP (webhook) function tools', () => {
  it('posts the arguments and returns the JSON answer as the output string', async () => {
    seen = [];
    const res = await run('create_ticket', { title: 'Printer on fire' }, { 'x-toolgate-depth': '2' });
    expect(res.json()).toMatchObject({ ok: true, source: 'function', output: '{"id":"T-1","received":{"title":"Printer on fire"}}' });
    expect(seen[0]!.headers['x-service-token']).toBe('svc-secret');
    expect(seen[0]!.headers['x-toolgate-depth']).toBe('3');
  });

  it("never forwards the caller's Authorization header", async () => {
    seen = [];
    await run('create_ticket', { title: 'x' });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers.authorization).toBeUndefined();
    expect(JSON.stringify(seen[0]!.headers)).not.toContain(token);
  });

  it('answers TIMEOUT when the upstream is slower than the tool timeout', async () => {
    const res = await run('slow_hook', { title: 'x' });
    expect(res.statusCode).toBe(200);
    expect(res.json().error).toMatchObject({ errorType: 'TIMEOUT' });
  });

  it('answers UPSTREAM_ERROR with the status when the upstream fails', async () => {
    const res = await run('failing_hook', { title: 'x' });
    expect(res.json().error).toEqual({ errorType: 'UPSTREAM_ERROR', error: 'webhook answered HTTP 500: database is down' });
  });

  it('sends GET arguments as query parameters', async () => {
    seen = [];
    await run('lookup', { title: 'a b' });
    expect(seen[0]!.url).toBe('/lookup?title=a+b');
  });
});
