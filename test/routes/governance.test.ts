import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken } from '../helpers/build.js';
import { governedConfig, governedState } from '../helpers/governed.js';

let app: FastifyInstance;
let alice: string;
beforeAll(async () => {
  app = await buildTestApp(governedConfig());
  alice = await signToken({ sub: 'alice', department: 'sales' });
});
afterAll(async () => app.close());

const execute = (payload: Record<string, unknown>, token = alice) => app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload });
const batch = (payload: Record<string, unknown>) => app.inject({ method: 'POST', url: '/v1/execute/batch', headers: bearer(alice), payload });

describe('rate limiting over HTTP', () => {
  it('answers 429 with Retry-After and RATE_LIMITED once the window is full', async () => {
    const token = await signToken({ sub: 'rate-user' });
    for (let i = 0; i < 3; i++) expect((await execute({ name: 'limited_echo', arguments: { text: 'x' } }, token)).statusCode).toBe(200);
    const limited = await execute({ name: 'limited_echo', arguments: { text: 'x' } }, token);
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(limited.json()).toMatchObject({ ok: false, error: { errorType: 'RATE_LIMITED' } });
    expect(limited.json().retryAfterMs).toBeGreaterThan(0);
  });
});

describe('bound arguments over HTTP', () => {
  it('hands the tool the tenant filter from the token even when the model sends another', async () => {
    const res = await execute({ name: 'kb_search', arguments: { query: 'q', filter: { tenant: 'globex', department: 'finance' } } });
    expect(JSON.parse(res.json().output)).toEqual({ query: 'q', filter: { tenant: 'acme', department: 'sales' } });
  });

  it('never lists the bound field and rejects it where the schema is strict', async () => {
    const listing = await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(alice) });
    const tools = listing.json().tools as Array<{ name: string; inputSchema: { properties: Record<string, unknown> } }>;
    expect(Object.keys(tools.find((t) => t.name === 'kb_search')!.inputSchema.properties)).toEqual(['query']);
    const strict = await execute({ name: 'kb_strict', arguments: { query: 'q', filter: { tenant: 'globex' } } });
    expect(strict.json().error.errorType).toBe('VALIDATION_ERROR');
    expect(JSON.parse((await execute({ name: 'kb_strict', arguments: { query: 'q' } })).json().output)).toEqual({ query: 'q', filter: { tenant: 'acme' } });
  });

  it('fails closed when the token lacks a bound claim', async () => {
    const noDepartment = await signToken({ sub: 'alice' });
    const res = await execute({ name: 'kb_search', arguments: { query: 'q' } }, noDepartment);
    expect(res.json().error).toMatchObject({ errorType: 'PERMISSION_DENIED' });
  });
});

describe('POST /v1/execute/batch', () => {
  it('groups safe calls under maxParallel, runs the unsafe one alone, and keeps input order', async () => {
    const events = governedState().events;
    events.length = 0;
    const res = await batch({
      step: 2,
      maxParallel: 2,
      calls: [
        { name: 'slow_read', arguments: { id: 'a', ms: 200 } },
        { name: 'slow_read', arguments: { id: 'b', ms: 200 } },
        { name: 'slow_read', arguments: { id: 'c', ms: 200 } },
        { name: 'serial_write', arguments: { id: 'd' } },
      ],
    });
    expect(res.statusCode).toBe(200);
    const results = res.json().results as Array<{ callId: string; output: string }>;
    expect(results.map((r) => [r.callId, r.output])).toEqual([
      ['tool_step_2_0', 'a'],
      ['tool_step_2_1', 'b'],
      ['tool_step_2_2', 'c'],
      ['tool_step_2_3', 'd'],
    ]);
    expect(events.slice(0, 2)).toEqual(['start a', 'start b']);
    const firstEnd = Math.min(events.indexOf('end a'), events.indexOf('end b'));
    expect(events.indexOf('start c')).toBeGreaterThan(firstEnd);
    expect(events.indexOf('start c')).toBeLessThan(Math.max(events.indexOf('end a'), events.indexOf('end b')));
    expect(events.slice(-2)).toEqual(['start d', 'end d']);
  });

  it('times out one call without disturbing its siblings', async () => {
    const res = await batch({
      timeoutMs: 100,
      calls: [
        { name: 'slow_read', arguments: { id: 'slow', ms: 5_000 }, callId: 'slow' },
        { name: 'slow_read', arguments: { id: 'quick', ms: 1 }, callId: 'quick' },
      ],
    });
    const [slow, quick] = res.json().results;
    expect(slow).toMatchObject({ callId: 'slow', ok: false, error: { errorType: 'TIMEOUT' } });
    expect(quick).toMatchObject({ callId: 'quick', ok: true, output: 'quick' });
  });

  it('answers pending_approval inside its slot and failures in theirs', async () => {
    const res = await batch({
      calls: [{ name: 'get_weather', arguments: { city: 'Rome' } }, { name: 'create_ticket', arguments: { title: 'in-batch' } }, { name: 'nope' }],
    });
    const [weather, ticket, unknown] = res.json().results;
    expect(weather).toMatchObject({ ok: true, callId: 'tool_step_0_0' });
    expect(ticket).toMatchObject({ status: 'pending_approval', callId: 'tool_step_0_1' });
    expect(ticket.approvalId).toEqual(expect.any(String));
    expect(unknown).toMatchObject({ error: { errorType: 'UNKNOWN_TOOL' }, callId: 'tool_step_0_2' });
  });

  it('runs everything serially with parallel false', async () => {
    const events = governedState().events;
    events.length = 0;
    await batch({ parallel: false, calls: ['x', 'y'].map((id) => ({ name: 'slow_read', arguments: { id, ms: 20 } })) });
    expect(events).toEqual(['start x', 'end x', 'start y', 'end y']);
  });

  it('rejects a body without calls', async () => {
    expect((await batch({ calls: [] })).statusCode).toBe(400);
  });
});
