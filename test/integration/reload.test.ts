import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { loadConfigFile } from '../../src/config/load.js';
import { watchConfigFile } from '../../src/config/watch.js';
import { bearer, buildTestApp, API_KEY, OPERATOR_KEY, scrapeMetrics, sha256 } from '../helpers/build.js';
import { packageRoot } from '../../src/config/demo.js';

const fixture = join(packageRoot(), 'test/fixtures/functions/basic.mjs');
const yaml = (deny: string[], extra = '') => `
auth:
  apiKeys:
    - { id: ci, sha256: "${sha256(API_KEY)}", tenant: acme, user: ci-bot, roles: [admin] }
    - { id: ops, sha256: "${sha256(OPERATOR_KEY)}", tenant: acme, user: ops }
  operators: [{ apiKey: ops }]
audit: { sink: "off" }
logging: { level: silent }
functions:
  - module: ${fixture}
tenants:
  acme:
    tools: { deny: ${JSON.stringify(deny)} }
${extra}`;

let dir: string;
let path: string;
let app: FastifyInstance;
const headers = bearer(API_KEY);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-reload-'));
  path = join(dir, 'toolgate.yaml');
  await writeFile(path, yaml([]));
  app = await buildTestApp(await loadConfigFile(path), { loadConfig: () => loadConfigFile(path) });
});
afterAll(async () => {
  await app.close();
  await rm(dir, { recursive: true, force: true });
});

const names = async () => (await app.inject({ url: '/v1/tools', headers })).json().tools.map((t: { name: string }) => t.name);
const reload = () => app.inject({ method: 'POST', url: '/v1/admin/reload', headers: bearer(OPERATOR_KEY) });

describe('hot reload', () => {
  it('lets an in-flight call finish on its snapshot, then denies the next call and hides the tool', async () => {
    expect(await names()).toContain('slow');
    const inFlight = app.inject({ method: 'POST', url: '/v1/execute', headers, payload: { name: 'slow', arguments: { ms: 400 } } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await writeFile(path, yaml(['slow']));
    const reloaded = await reload();
    expect(reloaded.json()).toEqual({ reloaded: true, changed: true, restartRequired: [] });
    const finished = await inFlight;
    expect(finished.json()).toMatchObject({ ok: true, output: 'waited 400' });
    const next = await app.inject({ method: 'POST', url: '/v1/execute', headers, payload: { name: 'slow', arguments: { ms: 1 } } });
    expect(next.json().error.errorType).toBe('PERMISSION_DENIED');
    expect(await names()).not.toContain('slow');
  });

  it('refuses a broken config with the reason and keeps the old one serving', async () => {
    await writeFile(path, yaml(['slow']).replace('tenants:', 'tenantz:'));
    const res = await reload();
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'TG_CONFIG_INVALID' });
    expect(res.json().message).toContain('unknown key "tenantz"');
    expect((await app.inject({ method: 'POST', url: '/v1/execute', headers, payload: { name: 'get_weather', arguments: { city: 'x' } } })).json().ok).toBe(true);
    expect(await names()).not.toContain('slow');
    const metrics = await scrapeMetrics(app);
    expect(metrics).toContain('toolgate_config_reloads_total{result="error"} 1');
    expect(metrics).toContain('toolgate_config_reloads_total{result="ok"} 1');
  });

  it('changes the listing ETag only when the pool really changed', async () => {
    await writeFile(path, yaml(['slow']));
    await reload();
    const before = (await app.inject({ url: '/v1/tools', headers })).headers.etag;
    await writeFile(path, yaml(['slow']).replace('level: silent', 'level: fatal'));
    expect((await reload()).json().changed).toBe(true);
    expect((await app.inject({ url: '/v1/tools', headers })).headers.etag).toBe(before);
    await writeFile(path, yaml([]));
    await reload();
    expect((await app.inject({ url: '/v1/tools', headers })).headers.etag).not.toBe(before);
  });

  it('names the changed settings that need a restart (egress.allow, audit), and keeps naming them until one', async () => {
    await writeFile(path, yaml([]).replace('audit: { sink: "off" }', 'audit: { sink: stdout }\negress: { allow: [10.1.2.0/24] }'));
    const first = await reload();
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ reloaded: true, changed: true, restartRequired: ['audit', 'egress.allow'] });
    // A later reload that changes something else still runs on the start-up egress and audit settings.
    await writeFile(path, yaml(['slow']).replace('audit: { sink: "off" }', 'audit: { sink: stdout }\negress: { allow: [10.1.2.0/24] }'));
    expect((await reload()).json().restartRequired).toEqual(['audit', 'egress.allow']);
    // Back to the running values: nothing waits for a restart.
    await writeFile(path, yaml([]));
    expect((await reload()).json()).toEqual({ reloaded: true, changed: true, restartRequired: [] });
  });

  it("refuses reload to a tenant admin: it would change every tenant's config", async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/admin/reload', headers });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'TG_FORBIDDEN', message: 'requires a global operator (auth.operators)' });
  });

  it('refuses reload to a non-admin', async () => {
    const viewerKey = 'viewer-key';
    await writeFile(path, yaml([]).replace('roles: [admin] }', `roles: [admin] }\n    - { id: v, sha256: "${sha256(viewerKey)}", tenant: acme, user: v, roles: [] }`));
    await reload();
    const res = await app.inject({ method: 'POST', url: '/v1/admin/reload', headers: bearer(viewerKey) });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('TG_FORBIDDEN');
  });

  it('the file watcher fires once per burst of writes', async () => {
    let fired = 0;
    const stop = watchConfigFile(path, () => (fired += 1), 100);
    await writeFile(path, yaml([]));
    await writeFile(path, yaml(['x']));
    await writeFile(path, yaml([]));
    await new Promise((resolve) => setTimeout(resolve, 400));
    stop();
    expect(fired).toBe(1);
  });
});

describe('per-tenant settings after a reload', () => {
  it('a tenant added by reload gets its own userMcp.maxServers, not the start-up config', async () => {
    const bobKey = 'tg_reload_bob_key';
    const withBeta = `${yaml([])}  beta:
    userMcp: { maxServers: 2 }
`.replace('roles: [admin] }', `roles: [admin] }\n    - { id: b, sha256: "${sha256(bobKey)}", tenant: beta, user: bob, roles: [] }`);
    const file = join(dir, 'tenants.yaml');
    await writeFile(file, yaml([]));
    // The egress check resolves through this map: the PUT below never connects, so no traffic leaves.
    const resolve = async (host: string) => (host === 'mcp.example.test' ? ['93.184.216.34'] : []);
    const tenantApp = await buildTestApp(await loadConfigFile(file), { loadConfig: () => loadConfigFile(file), resolve });
    try {
      await writeFile(file, withBeta);
      expect((await tenantApp.inject({ method: 'POST', url: '/v1/admin/reload', headers: bearer(OPERATOR_KEY) })).statusCode).toBe(200);
      const put = (serviceId: string) =>
        tenantApp.inject({ method: 'PUT', url: `/v1/users/bob/mcp-servers/${serviceId}`, headers: bearer(bobKey), payload: { url: 'http://mcp.example.test/mcp' } });
      expect((await put('one')).statusCode).toBe(201);
      expect((await put('two')).statusCode).toBe(201);
      const third = await put('three');
      expect(third.statusCode).toBe(409);
      expect(third.json().message).toBe('at most 2 MCP servers per user');
    } finally {
      await tenantApp.close();
    }
  });
});
