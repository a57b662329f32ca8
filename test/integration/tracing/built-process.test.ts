// The must-show of traces, on the real built gateway process (dist/src/server.js) configured only by the
// standard OpenTelemetry environment variables.
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { packageRoot } from '../../../src/config/demo.js';
import { API_KEY, sha256 } from '../../helpers/build.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlp-receiver.js';
import { freePort, startServer } from '../../helpers/server-process.js';
import { builtServer } from '../../helpers/built-server.js';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const children: ChildProcess[] = [];
let dir: string;
let receiver: OtlpReceiver;

beforeAll(async () => {
  // What ships: dist/ built from these sources (test/helpers/built-server.ts).
  await builtServer();
  dir = await mkdtemp(join(tmpdir(), 'toolgate-otel-'));
  receiver = await startOtlpReceiver();
}, 240_000);
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await receiver?.close();
  await rm(dir, { recursive: true, force: true });
});

it('exports the spans of a /v1/execute call with a traceparent to <endpoint>/v1/traces as http/json, including execute_tool <tool>', async () => {
  const file = join(dir, 'config.yaml');
  await writeFile(
    file,
    [
      'auth:',
      `  apiKeys: [{ id: ci, sha256: "${sha256(API_KEY)}", tenant: acme, user: ci-bot, roles: [admin] }]`,
      `functions: [{ module: ${JSON.stringify(join(packageRoot(), 'test/fixtures/functions/basic.mjs'))} }]`,
      'tenants: { acme: {} }',
      'metrics: { enabled: false }',
      'audit: { sink: off }',
    ].join('\n'),
  );
  const port = await freePort();
  const server = await startServer(
    file,
    children,
    { PORT: String(port), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '50' },
    { built: true },
  );
  await server.logLine((line) => String(line.msg).startsWith('Server listening'));
  const res = await fetch(`http://127.0.0.1:${port}/v1/execute`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json', traceparent: `00-${TRACE_ID}-b7ad6b7169203331-01` },
    body: JSON.stringify({ name: 'get_weather', arguments: { city: 'Oslo' } }),
  });
  expect(await res.json()).toMatchObject({ ok: true });

  const spans = await receiver.waitFor((all) => all.filter((span) => span.traceId === TRACE_ID).length >= 2, 15_000);
  const call = spans.find((span) => span.traceId === TRACE_ID && span.name === 'execute_tool get_weather');
  expect(call?.attributes['gen_ai.tool.name']).toBe('get_weather');
  expect(spans.find((span) => span.traceId === TRACE_ID && span.name === 'POST /v1/execute')).toMatchObject({ parentSpanId: 'b7ad6b7169203331' });
  expect(new Set(receiver.paths)).toEqual(new Set(['/v1/traces']));
  expect(receiver.contentTypes.every((type) => type.startsWith('application/json'))).toBe(true);
  // The access line carries the trace id.
  const access = await server.logLine((line) => line.msg === 'request completed' && line.url === '/v1/execute');
  expect(access.traceId).toBe(TRACE_ID);
});

it('refuses a bad OTEL_* value at start-up as a configuration error: one line on stderr, exit 78', async () => {
  const file = join(dir, 'bad-otel.yaml');
  await writeFile(file, ['auth:', `  apiKeys: [{ id: ci, sha256: "${sha256(API_KEY)}", tenant: acme, user: ci-bot, roles: [] }]`, 'tenants: { acme: {} }', 'metrics: { enabled: false }'].join('\n'));
  const { PORT: _port, ...inherited } = process.env;
  const outcome = await promisify(execFile)(process.execPath, [join(packageRoot(), 'dist/src/server.js')], {
    cwd: packageRoot(),
    env: { ...inherited, TOOLGATE_CONFIG: file, HOST: '127.0.0.1', PORT: String(await freePort()), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
    timeout: 30_000,
  }).then(
    () => ({ code: 0, stderr: '' }),
    (error: { code?: number; stderr?: string }) => ({ code: error.code, stderr: error.stderr ?? '' }),
  );
  expect(outcome.code).toBe(78);
  expect(outcome.stderr).toBe('toolgate: OTEL_EXPORTER_OTLP_PROTOCOL grpc is not supported (http/protobuf or http/json)\n');
});
