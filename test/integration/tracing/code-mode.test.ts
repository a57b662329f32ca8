// A code-mode script's inner calls: each an execute_tool span, child of the run_script span, and each
// counted by the rate limit like a direct call.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { API_KEY, bearer, buildTestApp, testConfig } from '../../helpers/build.js';
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
          policies: { 'rate-limit': { limit: 3, windowMs: 60_000, tools: ['get_weather'] } },
          toolsets: { code: { mode: 'code', tools: ['get_weather', 'write_note'] } },
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

it('traces each inner call under run_script, and the rate limit counts each of them', async () => {
  const traceId = 'c0de'.padStart(32, 'f');
  const code = `const out = []; for (let i = 0; i < 4; i++) { try { await tools.get_weather({ city: 'Oslo' }); out.push('ok'); } catch (e) { out.push(e.errorType); } } return out;`;
  const res = await app.inject({
    method: 'POST',
    url: '/v1/execute',
    headers: { ...bearer(API_KEY), traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    payload: { name: 'run_script', arguments: { code }, toolset: 'code' },
  });
  const body = res.json() as { ok: boolean; output: string };
  expect(body.ok, body.output).toBe(true);
  expect((JSON.parse(body.output) as { result: string[] }).result).toEqual(['ok', 'ok', 'ok', 'RATE_LIMITED']);
  // The window is spent for direct calls too.
  const direct = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(API_KEY), payload: { name: 'get_weather', arguments: { city: 'Oslo' } } });
  expect(direct.json()).toMatchObject({ ok: false, error: { errorType: 'RATE_LIMITED' } });

  const mine = (all: ReceivedSpan[]) => all.filter((span) => span.traceId === traceId);
  const spans = mine(await receiver.waitFor((all) => mine(all).filter((span) => span.name.startsWith('execute_tool')).length >= 5));
  const parent = spans.find((span) => span.name === 'execute_tool run_script');
  const inner = spans.filter((span) => span.name === 'execute_tool get_weather');
  expect(parent).toBeDefined();
  expect(inner).toHaveLength(4);
  expect(inner.every((span) => span.parentSpanId === parent?.spanId)).toBe(true);
});
