// Every starter config in examples/configs/ loads as written (secrets from the environment, as their
// comments say) and serves what its comments promise, through the same build as `npm start -- --config`.
import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { buildServer } from '../../src/app.js';
import { runCli } from '../../src/cli.js';
import { packageRoot } from '../../src/config/demo.js';
import { loadConfigFile } from '../../src/config/load.js';
import { echoTool, createTestState, startHttpTestServer, type HttpTestServer } from '../fixtures/mcp/test-server.js';
import { bearer, signToken } from '../helpers/build.js';
import { deleteRedisKeys, testRedisUrl } from '../helpers/redis.js';

const root = packageRoot();
const DEMO2_COMPANY = 'Demo Two Ltd';
const file = (name: string) => join(root, 'examples/configs', name);
const hashKey = async (key: string) => (await runCli(['hash-key'], () => Promise.resolve(key))).trim();
const apps: FastifyInstance[] = [];
let tempDir: string | undefined;
const auditDir = async () => (tempDir ??= await mkdtemp(join(tmpdir(), 'toolgate-example-configs-')));
const upstreams: HttpTestServer[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
  await Promise.all(upstreams.map((upstream) => upstream.close()));
  if (tempDir) await rm(tempDir, { recursive: true, force: true });
});

async function serve(name: string, env: NodeJS.ProcessEnv): Promise<FastifyInstance> {
  const config = await loadConfigFile(file(name), env);
  // A file audit log goes to a temporary folder, not next to the example.
  const audit = config.audit.sink === 'file' ? { ...config.audit, path: join(await auditDir(), 'audit.log') } : config.audit;
  const app = await buildServer({ ...config, audit, logging: { ...config.logging, level: 'silent' } }, { logger: false, defaultMetrics: false, env });
  apps.push(app);
  return app;
}
const names = async (app: FastifyInstance, token: string, query = '') => {
  const answer = await app.inject({ url: `/v1/tools${query}`, headers: bearer(token) });
  expect(answer.statusCode, answer.body).toBe(200);
  return (answer.json() as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name);
};
const execute = (app: FastifyInstance, token: string, name: string, args: Record<string, unknown>) =>
  app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name, arguments: args } });

describe('examples/configs', () => {
  it('holds the four starter configs (and the compose one), each tested here or in test/packaging.test.ts', () => {
    expect(readdirSync(join(root, 'examples/configs')).sort()).toEqual(['code-mode.yaml', 'compose.yaml', 'mcp-upstreams.yaml', 'multi-tenant-jwt.yaml', 'production.yaml', 'single-tenant.yaml']);
  });

  it('code-mode.yaml: the toolset is three tools, and one script calls two tools as the caller', async () => {
    const app = await serve('code-mode.yaml', { TOOLGATE_API_KEY_SHA256: await hashKey('code-key') });
    expect(await names(app, 'code-key', '?toolset=desk-code')).toEqual(['search_tools', 'describe_tools', 'run_script']);
    const code = `const [w, s] = await Promise.all([tools.get_weather({ city: 'Oslo' }), tools.add_numbers({ numbers: [40, 2] })]); return { city: w.city, sum: s.sum };`;
    const answer = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer('code-key'), payload: { name: 'run_script', arguments: { code }, toolset: 'desk-code' } });
    expect(answer.json()).toMatchObject({ ok: true });
    expect(JSON.parse((answer.json() as { output: string }).output)).toMatchObject({ result: { city: 'Oslo', sum: 42 } });
  });

  it('single-tenant.yaml: the key hashed by `toolgate hash-key` lists and runs the tools, and the denied one is absent', async () => {
    const app = await serve('single-tenant.yaml', { TOOLGATE_API_KEY_SHA256: await hashKey('team-key') });
    const listed = await names(app, 'team-key');
    expect(listed).toEqual(['add_numbers', 'echo', 'get_weather']);
    expect((await execute(app, 'team-key', 'add_numbers', { numbers: [40, 2] })).json()).toMatchObject({ ok: true, output: '{"sum":42}' });
    expect((await app.inject({ url: '/v1/tools', headers: bearer('another-key') })).statusCode).toBe(401);
  });

  it('multi-tenant-jwt.yaml: each tenant gets its own pool and its own passages; a viewer loses send_*', async () => {
    const secret = 'example-config-secret-at-least-32-bytes!';
    const app = await serve('multi-tenant-jwt.yaml', { TOOLGATE_JWT_SECRET: secret });
    const token = (tenant: string, roles: string[] = []) => signToken({ tenant, sub: `${tenant}-user`, roles }, { secret, issuer: 'https://idp.example.com', audience: 'toolgate' });
    expect(await names(app, await token('demo'))).toEqual(['add_numbers', 'echo', 'get_weather', 'knowledge_search', 'send_announcement']);
    expect(await names(app, await token('demo', ['viewer']))).not.toContain('send_announcement');
    expect(await names(app, await token('demo2'))).toEqual(['get_weather', 'knowledge_search']);
    const search = async (tenant: string) => (await execute(app, await token(tenant), 'knowledge_search', { query: 'vacation policy' })).json() as { ok: boolean; output: string };
    const [demo, demo2] = [await search('demo'), await search('demo2')];
    expect(demo.ok && demo2.ok).toBe(true);
    expect(demo.output).toContain('Demo Corp');
    expect(demo.output).not.toContain(DEMO2_COMPANY);
    expect(demo2.output).toContain(DEMO2_COMPANY);
    expect(demo2.output).not.toContain('Demo Corp');
    // The approval the file configures: HTTP 202 and an id.
    const pending = await execute(app, await token('demo'), 'send_announcement', { title: 'hello' });
    expect(pending.statusCode).toBe(202);
  });

  it('mcp-upstreams.yaml: a stdio and an HTTP upstream, toolsets of each, and an approval on the HTTP one decided by the approver', { timeout: 30_000 }, async () => {
    const upstream = await startHttpTestServer(createTestState([echoTool]));
    upstreams.push(upstream);
    const app = await serve('mcp-upstreams.yaml', {
      NOTES_MCP_URL: upstream.url,
      NOTES_MCP_TOKEN: 'upstream-credential',
      TOOLGATE_API_KEY_SHA256: await hashKey('writer-key'),
      TOOLGATE_APPROVER_KEY_SHA256: await hashKey('lead-key'),
    });
    await vi.waitFor(async () => expect(await names(app, 'writer-key')).toEqual(['calc_add', 'notes_echo']), { timeout: 20_000, interval: 200 });
    expect(await names(app, 'writer-key', '?toolset=maths')).toEqual(['calc_add']);
    expect(await names(app, 'writer-key', '?toolset=notes')).toEqual(['notes_echo']);
    expect((await execute(app, 'writer-key', 'calc_add', { a: 2, b: 3 })).json()).toMatchObject({ ok: true, output: '5', source: 'local-mcp' });
    expect(upstream.headers.some((headers) => headers.authorization === 'Bearer upstream-credential')).toBe(true);

    const pending = await execute(app, 'writer-key', 'notes_echo', { message: 'hi' });
    expect(pending.statusCode).toBe(202);
    const { approvalId } = pending.json() as { approvalId: string };
    const approved = await app.inject({ method: 'POST', url: `/v1/approvals/${approvalId}/approve`, headers: bearer('lead-key') });
    expect(approved.statusCode, approved.body).toBe(200);
    const fetched = await app.inject({ url: `/v1/approvals/${approvalId}`, headers: bearer('writer-key') });
    expect(fetched.json()).toMatchObject({ status: 'approved', decidedBy: 'lead', result: { ok: true, output: 'Echo: hi' } });
  });

  const redisUrl = testRedisUrl();
  it.skipIf(!redisUrl)('production.yaml: Redis, the metrics token on the API port, the console on, traces sampled, a config reload watched', async () => {
    const prefix = 'toolgate:';
    const env = {
      TOOLGATE_REDIS_URL: redisUrl!,
      TOOLGATE_JWKS_URL: 'https://idp.example.com/.well-known/jwks.json',
      TOOLGATE_CI_KEY_SHA256: await hashKey('ci-key'),
      TOOLGATE_METRICS_TOKEN: 'metrics-token-of-the-example',
    };
    const config = await loadConfigFile(file('production.yaml'), env);
    expect(config.store).toMatchObject({ kind: 'redis', url: redisUrl, onUnavailable: 'fail-closed' });
    expect(config.console.enabled).toBe(true);
    expect(config.telemetry).toMatchObject({ sampler: 'parentbased_traceidratio', samplerArg: 0.1 });
    expect(config.metrics).toMatchObject({ host: '0.0.0.0', port: 9464 });
    // The shared Redis of the suite: this file's keys go under a prefix of their own.
    expect(config.server.loadShedding).toMatchObject({ maxEventLoopDelayMs: 200, maxEventLoopUtilization: 0.95 });
    // Load shedding judges the event loop of its process: here that is the test runner's, busy with every
    // other app of this file, so it is off (test/integration/load-shedding.test.ts runs it in processes).
    const server = { ...config.server, loadShedding: { ...config.server.loadShedding, maxEventLoopDelayMs: 0, maxEventLoopUtilization: 0 } };
    const app = await buildServer({ ...config, server, store: { ...config.store, prefix: `example-production-${process.pid}:` } as typeof config.store, logging: { ...config.logging, level: 'silent' } }, { logger: false, defaultMetrics: false, env });
    apps.push(app);
    expect((await execute(app, 'ci-key', 'get_weather', { city: 'Oslo' })).json()).toMatchObject({ ok: true });
    expect(await names(app, 'ci-key')).not.toContain('send_announcement');
    const metrics = await app.inject({ url: '/metrics', headers: bearer('metrics-token-of-the-example') });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toContain('toolgate_tool_calls_total');
    expect((await app.inject({ url: '/metrics', headers: bearer('ci-key') })).statusCode).not.toBe(200);
    await deleteRedisKeys(redisUrl!, `example-production-${process.pid}:`);
    expect(prefix).toBe(config.store.kind === 'redis' ? config.store.prefix : undefined);
  });
});
