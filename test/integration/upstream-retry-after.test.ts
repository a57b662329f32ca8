// An upstream that says "not now" (429 or 503 with Retry-After) is answered honestly: 429 is RATE_LIMITED,
// both carry the wait as `retryAfterMs`, the retry policy waits that long before the next attempt (up to
// its cap), and a wait beyond the cap goes back to the caller as HTTP 429 + Retry-After.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';

let upstream: Server;
let app: FastifyInstance;
let token: string;
/** Per path: the answers still to give (status, Retry-After), then 200. */
const script = new Map<string, Array<[number, string]>>();
const arrivals = new Map<string, number[]>();

beforeAll(async () => {
  upstream = createServer((req, res) => {
    const path = req.url ?? '';
    arrivals.set(path, [...(arrivals.get(path) ?? []), performance.now()]);
    req.resume();
    req.on('end', () => {
      const next = script.get(path)?.shift();
      if (next) {
        res.writeHead(next[0], { 'retry-after': next[1], 'content-type': 'text/plain' });
        res.end('slow down');
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end('{"answer":42}');
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const hook = (name: string) => ({ name, inputSchema: { type: 'object', properties: {} }, readOnly: true, http: { method: 'GET', url: `${base}/${name}` } });
  app = await buildTestApp(
    testConfig({
      functions: [hook('limited'), hook('unavailable'), hook('patient')],
      tenants: { acme: { tools: { allow: ['*'], deny: [] }, policies: { retry: { attempts: 2, maxRetryAfterMs: 2000 } } } },
    }),
  );
  token = await signToken();
});
afterAll(async () => {
  await app.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

const run = (name: string) => app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name, arguments: {} } });

describe("an upstream's Retry-After", () => {
  it('429 with Retry-After: 1 is waited out by retry (not the 100 ms backoff), then the call succeeds', { timeout: 20_000 }, async () => {
    script.set('/limited', [[429, '1']]);
    const answer = await run('limited');
    expect(answer.json()).toMatchObject({ ok: true, output: '{"answer":42}' });
    const [first, second] = arrivals.get('/limited')!;
    expect(second! - first!).toBeGreaterThanOrEqual(950);
  });

  it('503 with Retry-After is honoured the same way', { timeout: 20_000 }, async () => {
    script.set('/unavailable', [[503, '1']]);
    expect((await run('unavailable')).json()).toMatchObject({ ok: true });
    const [first, second] = arrivals.get('/unavailable')!;
    expect(second! - first!).toBeGreaterThanOrEqual(950);
  });

  it('a wait beyond the cap is not slept: RATE_LIMITED at once, HTTP 429 with the upstream\'s Retry-After', async () => {
    script.set('/patient', [[429, '30'], [429, '30']]);
    const started = performance.now();
    const answer = await run('patient');
    expect(performance.now() - started).toBeLessThan(1500);
    expect(arrivals.get('/patient')).toHaveLength(1);
    expect(answer.statusCode).toBe(429);
    expect(answer.headers['retry-after']).toBe('30');
    expect(answer.json()).toMatchObject({ ok: false, retryAfterMs: 30_000, error: { errorType: 'RATE_LIMITED', error: 'webhook answered HTTP 429 (retry after 30 s): slow down' } });
  });
});
