// A span for each policy that decided something: a timeout, a retry attempt, an approval parked, a
// rate-limit refusal — each under the execute_tool span of its call.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { API_KEY, bearer, buildTestApp, signToken, testConfig } from '../../helpers/build.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../../helpers/otlp-receiver.js';

process.env.OTEL_BSP_SCHEDULE_DELAY = '50';

let receiver: OtlpReceiver;
let app: FastifyInstance;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  app = await buildTestApp(
    testConfig({
      tenants: {
        acme: {
          tools: { deny: ['explode'] },
          policies: {
            'rate-limit': { limit: 1, windowMs: 60_000, tools: ['get_weather'] },
            approval: { tools: ['write_note'] },
            timeout: { tools: { slow: 50 } },
            retry: { attempts: 2, baseMs: 0, maxMs: 0 },
          },
        },
      },
    }),
    { env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' } },
  );
});
afterAll(async () => {
  await app?.close();
  await receiver?.close();
});

let counter = 0;
async function traced(url: string, payload: Record<string, unknown>, token = API_KEY): Promise<{ status: number; body: Record<string, unknown>; spans: ReceivedSpan[] }> {
  counter += 1;
  const traceId = counter.toString(16).padStart(32, 'f');
  const res = await app.inject({ method: 'POST', url, headers: { ...bearer(token), traceparent: `00-${traceId}-00f067aa0ba902b7-01` }, payload });
  const mine = (all: ReceivedSpan[]) => all.filter((span) => span.traceId === traceId);
  return { status: res.statusCode, body: res.json() as Record<string, unknown>, spans: mine(await receiver.waitFor((all) => mine(all).some((span) => span.kind === 2))) };
}

const call = (name: string, args: Record<string, unknown>) => traced('/v1/execute', { name, arguments: args });

const toolSpan = (spans: ReceivedSpan[]) => spans.find((span) => span.name.startsWith('execute_tool'))!;

it('records each timed-out attempt and the retry attempt that followed it', async () => {
  const { spans } = await call('slow', { ms: 5_000 });
  const tool = toolSpan(spans);
  expect(tool.attributes['toolgate.outcome']).toBe('TIMEOUT');
  const retry = spans.find((span) => span.name === 'policy retry attempt 2');
  expect(retry).toMatchObject({ parentSpanId: tool.spanId });
  expect(retry!.attributes).toMatchObject({ 'toolgate.policy': 'retry', 'toolgate.retry.attempt': 2, 'toolgate.outcome': 'TIMEOUT' });
  const timeouts = spans.filter((span) => span.name === 'policy timeout');
  expect(timeouts.map((span) => span.parentSpanId).sort()).toEqual([retry!.spanId, tool.spanId].sort());
  expect(timeouts[0]!.attributes).toMatchObject({ 'toolgate.policy': 'timeout', 'toolgate.decision': 'TIMEOUT' });
});

it('records a call parked for approval', async () => {
  const { status, spans } = await call('write_note', { text: 'hello' });
  expect(status).toBe(202);
  const approval = spans.find((span) => span.name === 'policy approval');
  expect(approval).toMatchObject({ parentSpanId: toolSpan(spans).spanId, attributes: { 'toolgate.policy': 'approval', 'toolgate.decision': 'pending_approval' } });
  expect(toolSpan(spans).attributes['toolgate.outcome']).toBe('pending_approval');
});

it("traces the approved run in the approver's request, after a span for the time it waited, linked to the call that asked and naming the approval", async () => {
  const parked = await call('write_note', { text: 'hello' });
  const asked = toolSpan(parked.spans);
  const approvalId = String(parked.body.approvalId);
  expect(asked.attributes['toolgate.approval.id']).toBe(approvalId);
  const approver = await signToken({ sub: 'boss', roles: ['approver'] });
  const { status, spans } = await traced(`/v1/approvals/${String(parked.body.approvalId)}/approve`, {}, approver);
  expect(status).toBe(200);
  const server = spans.find((span) => span.kind === 2)!;
  expect(server.name).toBe('POST /v1/approvals/:id/approve');
  expect(spans.find((span) => span.name === 'policy approval')).toMatchObject({ parentSpanId: server.spanId, statusCode: 0, attributes: { 'toolgate.decision': 'approved' } });
  expect(toolSpan(spans)).toMatchObject({ name: 'execute_tool write_note', parentSpanId: server.spanId, attributes: { 'toolgate.outcome': 'ok', 'toolgate.approval.id': approvalId } });
  // The run is in the approver's trace; its link leads back to the requester's call in the requester's trace.
  expect(toolSpan(spans).traceId).not.toBe(asked.traceId);
  expect(toolSpan(spans).links).toEqual([{ traceId: asked.traceId, spanId: asked.spanId }]);
});

it('records a rate-limit refusal, and nothing for the call it let through', async () => {
  const first = await call('get_weather', { city: 'Oslo' });
  expect(first.spans.some((span) => span.name.startsWith('policy '))).toBe(false);
  const second = await call('get_weather', { city: 'Oslo' });
  expect(second.status).toBe(429);
  expect(second.spans.find((span) => span.name === 'policy rate-limit')).toMatchObject({
    parentSpanId: toolSpan(second.spans).spanId,
    attributes: { 'toolgate.policy': 'rate-limit', 'toolgate.decision': 'RATE_LIMITED' },
  });
});

it('records a denied call: the execute_tool span names PERMISSION_DENIED and is in error', async () => {
  const { body, spans } = await call('explode', {});
  expect((body.error as { errorType: string }).errorType).toBe('PERMISSION_DENIED');
  expect(toolSpan(spans)).toMatchObject({ name: 'execute_tool explode', statusCode: 2, attributes: { 'toolgate.outcome': 'PERMISSION_DENIED', 'error.type': 'PERMISSION_DENIED' } });
});
