// OpenTelemetry traces end to end in-process: a real OTLP receiver on loopback gets the spans the gateway
// exports (docs/configuration.md#telemetry).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isTracing } from '../../../src/observability/tracing.js';
import { API_KEY, bearer, buildTestApp, testConfig } from '../../helpers/build.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../../helpers/otlp-receiver.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const traceparent = (traceId = TRACE_ID, parent = PARENT_ID) => `00-${traceId}-${parent}-01`;

// The batch span processor exports every 50 ms instead of every 5 s (the SDK reads this variable itself).
process.env.OTEL_BSP_SCHEDULE_DELAY = '50';

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver.close();
});

const inTrace = (traceId: string) => (spans: ReceivedSpan[]) => spans.filter((span) => span.traceId === traceId);
const named = (spans: ReceivedSpan[], name: string) => spans.find((span) => span.name === name);

describe('with OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_PROTOCOL=http/json', () => {
  let app: FastifyInstance;
  let dir: string;
  const logLines: Array<Record<string, unknown>> = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-traces-'));
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logLines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    app = await buildTestApp(testConfig({ audit: { sink: 'file', path: join(dir, 'audit.log') } }), {
      logger: { level: 'info', stream },
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'toolgate-test' },
    });
  });
  afterAll(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });
  afterEach(() => {
    receiver.spans.length = 0;
  });

  it('continues an authenticated caller\'s traceparent: the server span and an execute_tool span with gen_ai.tool.name, at <endpoint>/v1/traces', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: { ...bearer(API_KEY), traceparent: traceparent() }, payload: { name: 'get_weather', arguments: { city: 'Oslo' }, callId: 'c-1' } });
    expect(res.json()).toMatchObject({ ok: true });
    const spans = inTrace(TRACE_ID)(await receiver.waitFor((all) => inTrace(TRACE_ID)(all).length >= 2));
    const server = named(spans, 'POST /v1/execute');
    const call = named(spans, 'execute_tool get_weather');
    expect(server).toMatchObject({ kind: 2, parentSpanId: PARENT_ID, serviceName: 'toolgate-test' });
    expect(server!.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/v1/execute', 'http.response.status_code': 200 });
    expect(call).toMatchObject({ kind: 1, parentSpanId: server!.spanId });
    expect(call!.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'get_weather',
      'gen_ai.tool.call.id': 'c-1',
      'toolgate.tenant': 'acme',
      'toolgate.tool.source': 'function',
      'toolgate.outcome': 'ok',
    });
    expect(receiver.paths.every((path) => path === '/v1/traces')).toBe(true);
    expect(receiver.contentTypes.every((type) => type.startsWith('application/json'))).toBe(true);
  });

  it('names the trace in the access line and in the audit event of the call', async () => {
    const traceId = '12121212121212121212121212121212';
    await app.inject({ method: 'POST', url: '/v1/execute', headers: { ...bearer(API_KEY), traceparent: traceparent(traceId), 'x-request-id': 'req-traced' }, payload: { name: 'get_weather', arguments: { city: 'Oslo' } } });
    await app.inject({ method: 'POST', url: '/v1/execute', headers: { ...bearer(API_KEY), traceparent: traceparent(traceId), 'x-request-id': 'req-refused' }, payload: { name: 'no_such_tool' } });
    const access = logLines.find((line) => line.msg === 'request completed' && line.requestId === 'req-traced');
    expect(access).toMatchObject({ traceId, spanId: expect.stringMatching(/^[0-9a-f]{16}$/) });
    const spans = await receiver.waitFor((all) => inTrace(traceId)(all).length >= 4);
    expect(spans.find((span) => span.spanId === access!.spanId)?.name).toBe('POST /v1/execute');
    // Earlier tests wrote lines to the same file: wait for these two requests' own lines.
    const ours = (event: Record<string, unknown>) => event.requestId === 'req-traced' || event.requestId === 'req-refused';
    let events: Array<Record<string, unknown>> = [];
    for (let round = 0; round < 250 && events.filter(ours).length < 2; round++) {
      await app.audit.flush();
      events = (await readFile(join(dir, 'audit.log'), 'utf8').catch(() => '')).split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
      if (events.filter(ours).length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // Written by the audit policy, and by the execution path for a call refused before the chain.
    expect(events.filter(ours).map((event) => [event.outcome, event.traceId])).toEqual([
      ['ok', traceId],
      ['UNKNOWN_TOOL', traceId],
    ]);
  });

  it('ends the server span of a request whose client hung up mid-call, as 499', async () => {
    const traceId = '34343434343434343434343434343434';
    const address = await app.listen({ host: '127.0.0.1', port: 0 });
    const client = new AbortController();
    const sent = fetch(`${address}/v1/execute`, {
      method: 'POST',
      headers: { ...bearer(API_KEY), 'content-type': 'application/json', traceparent: traceparent(traceId) },
      body: JSON.stringify({ name: 'slow', arguments: { ms: 10_000 } }),
      signal: client.signal,
    });
    // Long enough for the call to start (the tool waits 10 s, or until the client is gone).
    await new Promise((resolve) => setTimeout(resolve, 300));
    client.abort();
    await sent.catch(() => undefined);
    const spans = inTrace(traceId)(await receiver.waitFor((all) => inTrace(traceId)(all).some((span) => span.kind === 2)));
    expect(named(spans, 'POST /v1/execute')).toMatchObject({ statusCode: 2, attributes: { 'http.response.status_code': 499 } });
  });

  it('starts a new trace for an unauthenticated request, whatever traceparent it sends', async () => {
    const foreign = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
    const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: { authorization: 'Bearer wrong-token', traceparent: traceparent(foreign) }, payload: { name: 'get_weather' } });
    expect(res.statusCode).toBe(401);
    const spans = await receiver.waitFor((all) => all.some((span) => span.name === 'POST /v1/execute'));
    const server = named(spans, 'POST /v1/execute')!;
    expect(server.traceId).not.toBe(foreign);
    expect(server.parentSpanId).toBe('');
    expect(server.attributes['http.response.status_code']).toBe(401);
  });

  it('records a denied call with its errorType and the span in error', async () => {
    const traceId = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
    const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: { ...bearer(API_KEY), traceparent: traceparent(traceId) }, payload: { name: 'no_such_tool' } });
    expect(res.json().error.errorType).toBe('UNKNOWN_TOOL');
    const spans = inTrace(traceId)(await receiver.waitFor((all) => inTrace(traceId)(all).some((span) => span.name.startsWith('execute_tool'))));
    const call = spans.find((span) => span.name.startsWith('execute_tool'))!;
    expect(call.attributes).toMatchObject({ 'toolgate.outcome': 'UNKNOWN_TOOL', 'error.type': 'UNKNOWN_TOOL' });
    expect(call.statusCode).toBe(2);
  });

  it('makes the calls of a batch sibling execute_tool spans under the batch request', async () => {
    const traceId = 'cccccccccccccccccccccccccccccccc';
    const res = await app.inject({
      method: 'POST',
      url: '/v1/execute/batch',
      headers: { ...bearer(API_KEY), traceparent: traceparent(traceId) },
      payload: { calls: [{ name: 'get_weather', arguments: { city: 'A' } }, { name: 'get_weather', arguments: { city: 'B' } }, { name: 'write_note', arguments: { text: 'x' } }] },
    });
    expect(res.statusCode).toBe(200);
    const spans = inTrace(traceId)(await receiver.waitFor((all) => inTrace(traceId)(all).filter((span) => span.name.startsWith('execute_tool')).length === 3 && inTrace(traceId)(all).some((span) => span.kind === 2)));
    const server = spans.find((span) => span.kind === 2)!;
    const calls = spans.filter((span) => span.name.startsWith('execute_tool'));
    expect(server.name).toBe('POST /v1/execute/batch');
    expect(calls.map((span) => span.parentSpanId)).toEqual([server.spanId, server.spanId, server.spanId]);
    expect(calls.map((span) => span.attributes['gen_ai.tool.call.id']).sort()).toEqual(['tool_step_0_0', 'tool_step_0_1', 'tool_step_0_2']);
  });

  it('names the /mcp server span after the JSON-RPC method (`tools/call <tool>`), and a tools/call is an execute_tool span under it', async () => {
    const traceId = 'dddddddddddddddddddddddddddddddd';
    const res = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { ...bearer(API_KEY), traceparent: traceparent(traceId), accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_weather', arguments: { city: 'Rome' } } },
    });
    expect(res.statusCode).toBe(200);
    const spans = inTrace(traceId)(await receiver.waitFor((all) => inTrace(traceId)(all).length >= 2));
    const server = named(spans, 'tools/call get_weather')!;
    expect(server).toMatchObject({ kind: 2, parentSpanId: PARENT_ID });
    expect(server.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'jsonrpc.request.id': '1',
      'gen_ai.tool.name': 'get_weather',
      'gen_ai.operation.name': 'execute_tool',
      'network.transport': 'tcp',
      'http.request.method': 'POST',
      'http.route': '/mcp',
      'http.response.status_code': 200,
    });
    expect(named(spans, 'execute_tool get_weather')).toMatchObject({ parentSpanId: server.spanId });
    expect(named(spans, 'POST /mcp')).toBeUndefined();
  });

  it('names a tools/list over /mcp `tools/list`, and a notification after its method', async () => {
    const traceId = 'dededededededededededededededede';
    const headers = { ...bearer(API_KEY), traceparent: traceparent(traceId), accept: 'application/json, text/event-stream' };
    expect((await app.inject({ method: 'POST', url: '/mcp', headers, payload: { jsonrpc: '2.0', id: 'list-1', method: 'tools/list' } })).statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: '/mcp', headers, payload: { jsonrpc: '2.0', method: 'notifications/initialized' } })).statusCode).toBe(202);
    const spans = inTrace(traceId)(await receiver.waitFor((all) => inTrace(traceId)(all).filter((span) => span.kind === 2).length >= 2));
    expect(named(spans, 'tools/list')?.attributes).toMatchObject({ 'mcp.method.name': 'tools/list', 'jsonrpc.request.id': 'list-1' });
    expect(named(spans, 'notifications/initialized')?.attributes).toMatchObject({ 'mcp.method.name': 'notifications/initialized' });
    expect(named(spans, 'notifications/initialized')?.attributes['jsonrpc.request.id']).toBeUndefined();
  });
});

describe('an MCP client that sends its trace context in params._meta', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await buildTestApp(testConfig(), { env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' } });
  });
  afterAll(async () => {
    await app.close();
    receiver.spans.length = 0;
  });
  const mcpCall = (authorization: string, traceId: string) =>
    app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { authorization, accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_weather', arguments: { city: 'Rome' }, _meta: { traceparent: traceparent(traceId) } } },
    });

  it('is continued when the caller authenticated, as with a traceparent header', async () => {
    const traceId = '56565656565656565656565656565656';
    expect((await mcpCall(`Bearer ${API_KEY}`, traceId)).statusCode).toBe(200);
    const spans = inTrace(traceId)(await receiver.waitFor((all) => inTrace(traceId)(all).length >= 2));
    const server = named(spans, 'tools/call get_weather')!;
    expect(server.parentSpanId).toBe(PARENT_ID);
    expect(named(spans, 'execute_tool get_weather')).toMatchObject({ parentSpanId: server.spanId });
  });

  it('is not continued for an unauthenticated request, whose span keeps the HTTP name (its body is never read)', async () => {
    const traceId = '78787878787878787878787878787878';
    expect((await mcpCall('Bearer wrong-token', traceId)).statusCode).toBe(401);
    const spans = await receiver.waitFor((all) => all.some((span) => span.name === 'POST /mcp' && span.attributes['http.response.status_code'] === 401));
    const refused = spans.find((span) => span.name === 'POST /mcp' && span.attributes['http.response.status_code'] === 401)!;
    expect(refused.traceId).not.toBe(traceId);
    expect(refused.parentSpanId).toBe('');
  });
});

describe('with the telemetry config block', () => {
  it('exports http/protobuf to the configured endpoint, and the environment overrides the file', async () => {
    const app = await buildTestApp(testConfig({ telemetry: { endpoint: 'http://127.0.0.1:9/unused', serviceName: 'from-file' } }), { env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.endpoint}/v1/traces` } });
    try {
      const traceId = 'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';
      await app.inject({ method: 'POST', url: '/v1/execute', headers: { ...bearer(API_KEY), traceparent: traceparent(traceId) }, payload: { name: 'get_weather', arguments: { city: 'Oslo' } } });
      const spans = inTrace(traceId)(await receiver.waitFor((all) => inTrace(traceId)(all).length >= 2));
      expect(named(spans, 'execute_tool get_weather')).toMatchObject({ serviceName: 'from-file', parentSpanId: expect.any(String) });
      expect(receiver.contentTypes.at(-1)).toBe('application/x-protobuf');
    } finally {
      await app.close();
      receiver.spans.length = 0;
    }
  });

  it('stays off with OTEL_SDK_DISABLED=true, and off without any endpoint', async () => {
    for (const env of [{ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint }, {}]) {
      const app = await buildTestApp(testConfig(), { env });
      try {
        expect(isTracing()).toBe(false);
        const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: { ...bearer(API_KEY), traceparent: traceparent() }, payload: { name: 'get_weather', arguments: { city: 'Oslo' } } });
        expect(res.json()).toMatchObject({ ok: true });
      } finally {
        await app.close();
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.spans).toEqual([]);
  });
});
