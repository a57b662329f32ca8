// One AbortSignal per call, end to end over real sockets: a client that hangs up cancels the upstream MCP
// call it started, a timeout answers TIMEOUT and cancels upstream too, and a batch cancels its calls
// without piling listeners on one shared signal.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import type { FastifyInstance } from 'fastify';
import { bearer, buildTestApp, scrapeMetrics, signToken, testConfig } from '../helpers/build.js';
import { createTestState, echoTool, sleepTool, startHttpTestServer, type HttpTestServer } from '../fixtures/mcp/test-server.js';

// Marked concurrency-safe in the config below, so a batch runs its calls side by side (others run alone).
const slowRead = { ...sleepTool, definition: { ...sleepTool.definition, name: 'slow_read' } };
const state = createTestState([sleepTool, slowRead, echoTool]);
let upstream: HttpTestServer;
let app: FastifyInstance;
let base: string;
let token: string;
const agent = new Agent({ connections: 8 });
const dir = mkdtempSync(join(tmpdir(), 'tg-cancellation-'));
const auditPath = join(dir, 'audit.log');

/** The audit lines of calls to `tool`, oldest first. */
async function auditedCalls(tool: string): Promise<Array<Record<string, unknown>>> {
  await app.audit.flush();
  const lines = readFileSync(auditPath, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
  return lines.filter((line) => line.event === 'call' && line.tool === tool);
}

beforeAll(async () => {
  upstream = await startHttpTestServer(state);
  app = await buildTestApp(
    testConfig({
      mcp: { global: [{ id: 'ev', transport: 'streamable-http', url: upstream.url }] },
      audit: { sink: 'file', path: auditPath },
      tools: { slow_read: { concurrencySafe: true } },
      // No breaker: the timed-out calls here would open the service's circuit for the tests after them; no
      // retry: each batch call is one upstream call.
      tenants: {
        acme: { mcpServices: ['ev'], policies: { 'circuit-breaker': false, retry: false } },
        globex: { mcpServices: ['ev'], policies: { 'circuit-breaker': false, timeout: { tools: { sleep: 150 } } } },
      },
    }),
  );
  base = await app.listen({ host: '127.0.0.1', port: 0 });
  token = await signToken({ tenant: 'acme' });
});
afterAll(async () => {
  await app.close();
  await agent.close();
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

const post = (path: string, body: unknown, options: { signal?: AbortSignal; token?: string } = {}) =>
  request(`${base}${path}`, {
    method: 'POST',
    dispatcher: agent,
    signal: options.signal,
    headers: { ...bearer(options.token ?? token), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

const count = (list: readonly string[], name: string): number => list.filter((entry) => entry === name).length;

/** Collects the process warnings emitted while `work` runs. */
async function warningsDuring(work: () => Promise<void>): Promise<string[]> {
  const warnings: string[] = [];
  const onWarning = (warning: Error): void => void warnings.push(`${warning.name}: ${warning.message}`);
  process.on('warning', onWarning);
  try {
    await work();
    // Warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', onWarning);
  }
  return warnings;
}

describe('cancellation', () => {
  it('cancels the upstream MCP call when the HTTP client hangs up', { timeout: 40_000 }, async () => {
    const before = count(state.cancelled, 'sleep');
    const calls = count(state.calls, 'sleep');
    const hangUp = new AbortController();
    const pending = post('/v1/execute', { name: 'sleep', arguments: {} }, { signal: hangUp.signal }).catch((error: unknown) => error);
    await expect.poll(() => count(state.calls, 'sleep'), { timeout: 15_000 }).toBe(calls + 1);
    hangUp.abort();
    expect(await pending).toBeInstanceOf(Error);
    await expect.poll(() => count(state.cancelled, 'sleep'), { timeout: 15_000 }).toBe(before + 1);
    // Audited and counted as the caller's cancellation, not as the tool timing out.
    await expect.poll(async () => (await auditedCalls('sleep')).at(-1), { timeout: 5_000 }).toMatchObject({ outcome: 'cancelled', errorType: 'TIMEOUT' });
    expect(await scrapeMetrics(app)).toMatch(/toolgate_tool_calls_total\{tool="sleep",source="global-mcp",outcome="cancelled"\} 1\n/);
    expect(await scrapeMetrics(app)).not.toMatch(/toolgate_tool_calls_total\{tool="sleep",[^}]*outcome="TIMEOUT"\}/);
    // The gateway stays usable: the connection to the upstream was not torn down by the cancel.
    const echo = await post('/v1/execute', { name: 'echo', arguments: { message: 'still here' } });
    expect(await echo.body.json()).toMatchObject({ ok: true, output: 'Echo: still here' });
  });

  it('answers TIMEOUT when the attempt times out, and cancels the upstream call', { timeout: 40_000 }, async () => {
    const before = count(state.cancelled, 'sleep');
    const globex = await signToken({ tenant: 'globex' });
    const response = await post('/v1/execute', { name: 'sleep', arguments: {} }, { token: globex });
    expect(await response.body.json()).toMatchObject({ ok: false, error: { errorType: 'TIMEOUT', error: 'sleep timed out after 150 ms' } });
    await expect.poll(() => count(state.cancelled, 'sleep'), { timeout: 15_000 }).toBe(before + 1);
    expect((await auditedCalls('sleep')).at(-1)).toMatchObject({ outcome: 'TIMEOUT', errorType: 'TIMEOUT' });
  });

  it('runs a batch of 50 timed-out upstream calls, 32 at a time, without a MaxListenersExceededWarning, and cancels each upstream', { timeout: 40_000 }, async () => {
    const before = count(state.cancelled, 'slow_read');
    const messagesBefore = upstream.messages.length;
    let body: { results: Array<{ ok: boolean; error?: { errorType: string } }> } | undefined;
    const warnings = await warningsDuring(async () => {
      const response = await post('/v1/execute/batch', { maxParallel: 32, timeoutMs: 200, calls: Array.from({ length: 50 }, () => ({ name: 'slow_read', arguments: {} })) });
      body = (await response.body.json()) as typeof body;
    });
    expect(body?.results).toHaveLength(50);
    for (const result of body!.results) expect(result).toMatchObject({ ok: false, error: { errorType: 'TIMEOUT' } });
    expect(warnings.filter((warning) => warning.startsWith('MaxListenersExceededWarning'))).toEqual([]);
    // On a slow machine a queued call can reach its deadline before it starts: then it never reaches the
    // upstream. Every call the gateway did send is followed by a notifications/cancelled naming it. Over
    // streamable HTTP the cancel is its own POST and may overtake the call it names (the server then ignores
    // it, as MCP allows), so the upstream's own count can only be bounded, not matched.
    const since = (method: string) => upstream.messages.slice(messagesBefore).filter((message) => message.method === method);
    const uncancelled = (): Array<string | number | undefined> => {
      const cancelled = new Set(since('notifications/cancelled').map((message) => message.params?.requestId));
      return since('tools/call').map((message) => message.id).filter((id) => !cancelled.has(id));
    };
    expect(since('tools/call').length).toBeGreaterThan(0);
    await expect.poll(uncancelled, { timeout: 15_000 }).toEqual([]);
    expect(since('tools/call').every((message) => message.params?.name === 'slow_read')).toBe(true);
    await expect.poll(() => count(state.cancelled, 'slow_read') - before, { timeout: 15_000 }).toBeGreaterThan(0);
    // A batch's own timeout is a timeout, also for the calls that end after their answer was sent.
    expect((await auditedCalls('slow_read')).map((line) => line.outcome)).not.toContain('cancelled');
    expect(await scrapeMetrics(app)).not.toMatch(/toolgate_tool_calls_total\{tool="slow_read",[^}]*outcome="cancelled"\}/);
  });

  it('cancels every running call of a batch when its client hangs up', { timeout: 40_000 }, async () => {
    const before = count(state.cancelled, 'slow_read');
    const calls = count(state.calls, 'slow_read');
    const hangUp = new AbortController();
    const pending = post('/v1/execute/batch', { maxParallel: 12, calls: Array.from({ length: 12 }, () => ({ name: 'slow_read', arguments: {} })) }, { signal: hangUp.signal }).catch(
      (error: unknown) => error,
    );
    await expect.poll(() => count(state.calls, 'slow_read'), { timeout: 15_000 }).toBe(calls + 12);
    hangUp.abort();
    expect(await pending).toBeInstanceOf(Error);
    await expect.poll(() => count(state.cancelled, 'slow_read'), { timeout: 15_000 }).toBe(before + 12);
  });
});
