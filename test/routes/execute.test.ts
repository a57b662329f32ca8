import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { API_KEY, bearer, buildTestApp, signToken } from '../helpers/build.js';

let app: FastifyInstance;
let token: string;
beforeAll(async () => {
  app = await buildTestApp();
  token = await signToken();
});
afterAll(async () => app.close());

const execute = (body: unknown, headers: Record<string, string> = bearer(token)) =>
  app.inject({ method: 'POST', url: '/v1/execute', headers, payload: body as Record<string, unknown> });

describe('POST /v1/execute', () => {
  it('runs a function tool with object arguments and returns a ToolResult', async () => {
    const res = await execute({ name: 'get_weather', arguments: { city: 'Paris' }, callId: 'c1' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      callId: 'c1', name: 'get_weather', ok: true, output: '{"city":"Paris","tempC":21}', source: 'function',
      durationMs: expect.any(Number), truncated: false, trace: null,
    });
  });

  it('accepts arguments sent as a JSON string', async () => {
    const res = await execute({ name: 'get_weather', arguments: '{"city":"Lima"}' });
    expect(res.json()).toMatchObject({ ok: true, output: '{"city":"Lima","tempC":21}' });
    expect(res.json().callId).toMatch(/^call_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('names the call tool_step_<step>_0 when a step is given without callId', async () => {
    const res = await execute({ name: 'get_weather', arguments: { city: 'x' }, step: 3 });
    expect(res.json().callId).toBe('tool_step_3_0');
  });

  it('answers TOOL_EXCEPTION without a stack trace when the tool throws', async () => {
    const res = await execute({ name: 'explode', callId: 'boom' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.ok).toBe(false);
    expect(body.output).toBe('TOOL_ERROR: {"errorType":"TOOL_EXCEPTION","error":"kaboom","tool":"explode","callId":"boom"}');
    expect(body.error).toEqual({ errorType: 'TOOL_EXCEPTION', error: 'kaboom' });
    expect(body.output).not.toMatch(/at .*\.mjs/);
  });

  it('answers VALIDATION_ERROR naming the field for schema-invalid arguments', async () => {
    const res = await execute({ name: 'get_weather', arguments: { city: 42 } });
    expect(res.json().error.errorType).toBe('VALIDATION_ERROR');
    expect(res.json().error.error).toContain('"city"');
    const missing = await execute({ name: 'get_weather', arguments: {} });
    expect(missing.json().error.error).toContain('missing required field "city"');
  });

  it('answers VALIDATION_ERROR for arguments that are not a JSON object', async () => {
    for (const args of ['[1,2]', 'not json', '42']) {
      const res = await execute({ name: 'get_weather', arguments: args });
      expect(res.json().error).toMatchObject({ errorType: 'VALIDATION_ERROR' });
      expect(res.json().error.error).toContain('get_weather arguments must be a JSON object');
    }
  });

  it('answers VALIDATION_ERROR for a blank name and UNKNOWN_TOOL for an unknown one', async () => {
    expect((await execute({ name: '  ' })).json().error).toEqual({ errorType: 'VALIDATION_ERROR', error: 'tool name is required' });
    const unknown = await execute({ name: 'no_such_tool' });
    expect(unknown.statusCode).toBe(200);
    expect(unknown.json().error.errorType).toBe('UNKNOWN_TOOL');
  });

  it('resolves an alias and reports resolvedFrom', async () => {
    const res = await execute({ name: 'weather', arguments: { city: 'Oslo' } });
    expect(res.json()).toMatchObject({ ok: true, name: 'get_weather', resolvedFrom: 'weather' });
  });

  it('truncates output past maxResultChars and marks it', async () => {
    const res = await execute({ name: 'big_output', arguments: { size: 250 } });
    expect(res.json().truncated).toBe(true);
    expect(res.json().output).toBe(`${'x'.repeat(100)}…[truncated 150 chars]`);
  });

  it('returns the trace beside the output', async () => {
    const res = await execute({ name: 'with_trace' });
    expect(res.json()).toMatchObject({ output: 'visible', trace: { hidden: true } });
  });

  it('refuses a request without a name with 400', async () => {
    const res = await execute({ arguments: {} });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ statusCode: 400, code: 'TG_BAD_REQUEST', error: 'Bad Request' });
  });

  it('refuses malformed JSON with 400', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: { ...bearer(token), 'content-type': 'application/json' }, payload: '{"name": "get_weather",' });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('TG_BAD_REQUEST');
  });

  it('refuses a 10 MB body with 413', async () => {
    const payload = JSON.stringify({ name: 'echo', arguments: { message: 'x'.repeat(10 * 1024 * 1024) } });
    const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: { ...bearer(token), 'content-type': 'application/json' }, payload });
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe('TG_PAYLOAD_TOO_LARGE');
  });

  it('refuses __proto__ keys in the body and in string arguments without polluting prototypes', async () => {
    const res = await app.inject({
      method: 'POST', url: '/v1/execute', headers: { ...bearer(token), 'content-type': 'application/json' },
      payload: '{"name":"write_note","arguments":{"text":"a","__proto__":{"polluted":true}}}',
    });
    expect(res.statusCode).toBe(400);
    const viaString = await execute({ name: 'write_note', arguments: '{"text":"a","__proto__":{"polluted":true}}' });
    expect(viaString.json().error.errorType).toBe('VALIDATION_ERROR');
    const constructorKey = await execute({ name: 'write_note', arguments: '{"text":"a","constructor":{"prototype":{"polluted":true}}}' });
    expect(constructorKey.json().error.errorType).toBe('VALIDATION_ERROR');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('authenticates with a static API key', async () => {
    const res = await execute({ name: 'get_weather', arguments: { city: 'x' } }, bearer(API_KEY));
    expect(res.json().ok).toBe(true);
  });

  it('echoes a valid X-Request-Id and replaces a hostile one', async () => {
    const ok = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'req-123' } });
    expect(ok.headers['x-request-id']).toBe('req-123');
    const hostile = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'a b\u0000<script>' } });
    expect(hostile.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sends X-Request-Id on every answer: refused, failed validation, unmatched route', async () => {
    const headers = { 'x-request-id': 'req-every' };
    const answers = await Promise.all([
      app.inject({ method: 'POST', url: '/v1/execute', headers, payload: { name: 'get_weather' } }),
      app.inject({ method: 'POST', url: '/v1/execute', headers: { ...headers, ...bearer(API_KEY) }, payload: { nome: 'get_weather' } }),
      app.inject({ method: 'GET', url: '/v1/nothing-here', headers }),
      app.inject({ method: 'HEAD', url: '/healthz', headers }),
      app.inject({ method: 'GET', url: '/openapi.json', headers }),
    ]);
    expect(answers.map((answer) => answer.statusCode)).toEqual([401, 400, 404, 200, 200]);
    for (const answer of answers) expect(answer.headers['x-request-id'], `${answer.statusCode} ${answer.body}`).toBe('req-every');
  });
});
