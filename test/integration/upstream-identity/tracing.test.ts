// OpenTelemetry spans of calls with upstream identity: the call's span names the credential kind and its
// token's hash prefix; no span attribute holds a token.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken } from '../../helpers/build.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../../helpers/otlp-receiver.js';
import { startStage, type Stage } from './setup.js';

process.env.OTEL_BSP_SCHEDULE_DELAY = '50';

let receiver: OtlpReceiver;
let stage: Stage;
let app: FastifyInstance;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  stage = await startStage();
  app = await buildTestApp(stage.config(), { env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' } });
});
afterAll(async () => {
  await app?.close();
  await stage?.close();
  await receiver?.close();
});

it('records the credential kind and hash prefix on the call span, never the token', async () => {
  const alice = await signToken({ sub: 'alice' });
  const traces: Array<{ traceId: string; tool: string; kind: string }> = [
    { traceId: 'a'.repeat(32), tool: 'robot_whoami', kind: 'service' },
    { traceId: 'b'.repeat(32), tool: 'exch_whoami', kind: 'exchanged' },
  ];
  for (const { traceId, tool } of traces) {
    const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: { ...bearer(alice), traceparent: `00-${traceId}-00f067aa0ba902b7-01` }, payload: { name: tool, arguments: {} } });
    expect(res.json<{ ok: boolean }>().ok).toBe(true);
  }
  const spans = await receiver.waitFor((all) => traces.every(({ traceId }) => all.some((span) => span.traceId === traceId && span.name.startsWith('execute_tool'))), 15_000);
  for (const { traceId, kind } of traces) {
    const annotated = spans.filter((span: ReceivedSpan) => span.traceId === traceId && span.attributes['toolgate.upstream.credential.kind'] !== undefined);
    expect(annotated.map((span) => span.attributes['toolgate.upstream.credential.kind'])).toContain(kind);
    expect(String(annotated[0]?.attributes['toolgate.upstream.credential.token_hash'])).toMatch(/^[0-9a-f]{12}$/);
  }
  const everything = JSON.stringify(spans);
  for (const token of [...stage.as.issued, alice]) expect(everything.includes(token)).toBe(false);
});
