// A client that goes away mid-call: the tool's signal aborts (so executors stop work nobody will read),
// while a client that stays sees its call finish normally. Real sockets: inject() cannot hang up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import type { FastifyInstance } from 'fastify';
import { bearer, buildTestApp, scrapeMetrics, signToken } from '../helpers/build.js';
import { governedConfig, governedState } from '../helpers/governed.js';

let app: FastifyInstance;
let base: string;
let token: string;
const agent = new Agent({ connections: 4 });

beforeAll(async () => {
  app = await buildTestApp(governedConfig());
  base = await app.listen({ host: '127.0.0.1', port: 0 });
  token = await signToken();
});
afterAll(async () => {
  await app.close();
  await agent.close();
});

const slowRead = (id: string, ms: number, signal?: AbortSignal) =>
  request(`${base}/v1/execute`, {
    method: 'POST',
    dispatcher: agent,
    signal,
    headers: { ...bearer(token), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'slow_read', arguments: { id, ms } }),
  });

describe('client disconnect', () => {
  it('aborts the running tool when the client hangs up before the answer', async () => {
    const hangUp = new AbortController();
    const pending = slowRead('gone-1', 30_000, hangUp.signal).catch((error: unknown) => error);
    await expect.poll(() => governedState().events.includes('start gone-1'), { timeout: 5000 }).toBe(true);
    hangUp.abort();
    expect(await pending).toBeInstanceOf(Error);
    await expect.poll(() => governedState().events.includes('aborted gone-1'), { timeout: 5000 }).toBe(true);
    // The call's in-flight slot is given back (no response ever finished), and the hang-up is counted as 499.
    const metrics = () => scrapeMetrics(app);
    await expect.poll(metrics, { timeout: 5000 }).toContain('toolgate_http_requests_in_flight 0');
    expect(await metrics()).toMatch(/toolgate_http_requests_total\{method="POST",route="\/v1\/execute",status="499"\} 1/);
  });

  it('lets a call whose client stays finish without an abort', async () => {
    const response = await slowRead('stays-1', 20);
    expect(response.statusCode).toBe(200);
    expect(((await response.body.json()) as { ok: boolean }).ok).toBe(true);
    expect(governedState().events).toContain('end stays-1');
    expect(governedState().events).not.toContain('aborted stays-1');
  });
});
