// Trace context reaches every upstream hop (webhook, MCP over stdio and streamable HTTP, RAG http
// backend), each hop is a client span under its execute_tool span, and no span carries argument values,
// bound values or tokens. Spans are exported as http/protobuf to a real OTLP receiver on loopback.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../../src/config/demo.js';
import { API_KEY, bearer, buildTestApp, signToken, testConfig } from '../../helpers/build.js';
import { startMcpUpstream, textTool, type TestUpstream } from '../../helpers/mcp-upstream.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../../helpers/otlp-receiver.js';

process.env.OTEL_BSP_SCHEDULE_DELAY = '50';

const ARG_MARKER = 'ARG-MARKER-7f3a';
const BOUND_MARKER = 'BOUND-MARKER-c91e';

let receiver: OtlpReceiver;
let hooks: Server;
let hookHeaders: IncomingHttpHeaders[] = [];
let rag: Server;
let ragHeaders: IncomingHttpHeaders[] = [];
const ragBodies: string[] = [];
let remote: TestUpstream;
let app: FastifyInstance;
let jwt: string;

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function close(server: Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  hooks = createServer((req, res) => {
    hookHeaders.push(req.headers);
    req.resume();
    req.on('end', () => res.setHeader('content-type', 'application/json').end('{"id":"T-1"}'));
  });
  rag = createServer((req, res) => {
    ragHeaders.push(req.headers);
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => ragBodies.push(body) && res.setHeader('content-type', 'application/json').end(JSON.stringify({ hits: [{ id: 'd1', text: 'passage', source: 'handbook.md' }] })));
  });
  const hooksUrl = await listen(hooks);
  const ragUrl = await listen(rag);
  remote = await startMcpUpstream([textTool('remote_echo', () => 'fine')]);
  const schema = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'], additionalProperties: false };
  app = await buildTestApp(
    testConfig({
      functions: [
        { name: 'create_ticket', inputSchema: schema, http: { url: `${hooksUrl}/tickets` } },
        { name: 'lookup_ticket', inputSchema: schema, readOnly: true, http: { method: 'GET', url: `${hooksUrl}/lookup` } },
      ],
      rag: [{ name: 'kb_search', backend: { kind: 'http', url: `${ragUrl}/search` }, filter: { tenant: '${principal.tenant}', department: '${claims.department}' } }],
      mcp: {
        local: [{ service: 'tm', transport: 'stdio', command: process.execPath, args: [join(packageRoot(), 'test/fixtures/mcp/trace-meta-stdio.mjs')], env: {} }],
        global: [{ id: 'remote', transport: 'streamable-http', url: remote.url }],
      },
      tenants: { acme: { mcpServices: ['remote'] } },
    }),
    { env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint } },
  );
  jwt = await signToken({ department: BOUND_MARKER });
}, 60_000);
afterAll(async () => {
  await app?.close();
  await remote?.close();
  await close(hooks);
  await close(rag);
  await receiver?.close();
});

let counter = 0;
/** A fresh trace id per call, so each test reads only its own spans. */
function traceIdFor(): string {
  counter += 1;
  return counter.toString(16).padStart(32, 'a');
}

async function call(name: string, args: Record<string, unknown>, token = jwt): Promise<{ traceId: string; body: Record<string, unknown>; spans: ReceivedSpan[] }> {
  const traceId = traceIdFor();
  const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: { ...bearer(token), traceparent: `00-${traceId}-00f067aa0ba902b7-01` }, payload: { name, arguments: args } });
  const body = res.json() as Record<string, unknown>;
  const mine = (all: ReceivedSpan[]) => all.filter((span) => span.traceId === traceId);
  // Complete once the server span (the last to end) is in.
  const spans = mine(await receiver.waitFor((all) => mine(all).some((span) => span.kind === 2)));
  return { traceId, body, spans };
}

/** The client span of the hop and the execute_tool span it belongs to. */
function hopOf(spans: ReceivedSpan[]): { client: ReceivedSpan; tool: ReceivedSpan } {
  const client = spans.find((span) => span.kind === 3);
  const tool = spans.find((span) => span.name.startsWith('execute_tool'));
  if (!client || !tool) throw new Error(`no client or execute_tool span among ${spans.map((span) => span.name).join(', ')}`);
  return { client, tool };
}

/** The trace id and parent span id of a W3C traceparent header value. */
function parsed(traceparent: unknown): { traceId: string; parentId: string } {
  const [, traceId, parentId] = String(traceparent).split('-');
  return { traceId: traceId ?? '', parentId: parentId ?? '' };
}

describe('trace context to upstreams', () => {
  it('sends traceparent to a webhook, from a client span under the call', async () => {
    hookHeaders = [];
    const { traceId, body, spans } = await call('create_ticket', { title: 'Printer' });
    expect(body.ok).toBe(true);
    const { client, tool } = hopOf(spans);
    expect(parsed(hookHeaders[0]!.traceparent)).toEqual({ traceId, parentId: client.spanId });
    expect(client).toMatchObject({ name: 'POST', parentSpanId: tool.spanId });
    expect(client.attributes).toMatchObject({ 'http.request.method': 'POST', 'server.address': '127.0.0.1', 'http.response.status_code': 200 });
  });

  it('puts traceparent in params._meta of a stdio MCP call: the MCP server sees the trace', async () => {
    const { traceId, body, spans } = await call('tm_trace_meta', {});
    expect(body.ok).toBe(true);
    const { client, tool } = hopOf(spans);
    const seen = JSON.parse(String(body.output)) as { traceparent: string };
    expect(parsed(seen.traceparent)).toEqual({ traceId, parentId: client.spanId });
    expect(client).toMatchObject({ name: 'tools/call trace_meta', parentSpanId: tool.spanId });
    expect(client.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'trace_meta', 'network.transport': 'pipe', 'toolgate.upstream': 'tm' });
  });

  it('puts traceparent in params._meta of resources/list and resources/read, each a client span', async () => {
    const get = async (url: string) => {
      const traceId = traceIdFor();
      const res = await app.inject({ method: 'GET', url, headers: { ...bearer(jwt), traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
      const mine = (all: ReceivedSpan[]) => all.filter((span) => span.traceId === traceId);
      return { traceId, body: res.json() as Record<string, unknown>, spans: mine(await receiver.waitFor((all) => mine(all).some((span) => span.kind === 2))) };
    };
    const listing = await get('/v1/resources');
    const resource = (listing.body.resources as Array<{ uri: string }>).find((entry) => entry.uri.endsWith('trace://meta'))!;
    const server = listing.spans.find((span) => span.kind === 2)!;
    expect(listing.spans.find((span) => span.name === 'resources/list')).toMatchObject({ kind: 3, parentSpanId: server.spanId, attributes: { 'mcp.method.name': 'resources/list', 'toolgate.upstream': 'tm' } });
    const read = await get(`/v1/resources/read?uri=${encodeURIComponent(resource.uri)}`);
    const client = read.spans.find((span) => span.name === 'resources/read')!;
    const seen = JSON.parse((read.body.contents as Array<{ text: string }>)[0]!.text) as { traceparent: string };
    expect(parsed(seen.traceparent)).toEqual({ traceId: read.traceId, parentId: client.spanId });
  });

  it('sends traceparent as a header of a streamable HTTP MCP call', async () => {
    const before = remote.requests.length;
    const { traceId, body, spans } = await call('remote_echo', {});
    expect(body.ok).toBe(true);
    const { client } = hopOf(spans);
    const traced = remote.requests.slice(before).filter((headers) => headers.traceparent !== undefined);
    expect(traced.map((headers) => parsed(headers.traceparent))).toEqual([{ traceId, parentId: client.spanId }]);
    expect(client.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'network.transport': 'tcp' });
  });

  it('sends traceparent to the RAG http backend', async () => {
    ragHeaders = [];
    const { traceId, body, spans } = await call('kb_search', { query: 'printers' });
    expect(body.ok).toBe(true);
    const { client } = hopOf(spans);
    expect(parsed(ragHeaders[0]!.traceparent)).toEqual({ traceId, parentId: client.spanId });
  });
});

describe('what spans never carry', () => {
  it('holds no argument values, bound values or tokens in any span name or attribute', async () => {
    const results = [
      await call('create_ticket', { title: ARG_MARKER }),
      await call('lookup_ticket', { title: ARG_MARKER }),
      await call('kb_search', { query: ARG_MARKER }),
      await call('tm_trace_meta', { note: ARG_MARKER }),
      await call('remote_echo', { text: ARG_MARKER }),
      await call('create_ticket', { title: ARG_MARKER }, API_KEY),
      // A refused call: its arguments are invalid, and still never recorded.
      await call('create_ticket', { title: ARG_MARKER, extra: ARG_MARKER }),
    ];
    expect(results.map((result) => result.spans.some((span) => span.name.startsWith('execute_tool')))).toEqual(results.map(() => true));
    const exported = JSON.stringify(receiver.spans);
    for (const secret of [ARG_MARKER, BOUND_MARKER, jwt, API_KEY]) expect(exported).not.toContain(secret);
    // The markers did reach the upstream (the query and the bound filter): the check above is not vacuous.
    expect(ragBodies.at(-1)).toContain(ARG_MARKER);
    expect(ragBodies.at(-1)).toContain(BOUND_MARKER);
  });
});
