// Where documents come from and what happens when one is bad: URLs through the egress guard, a
// private base URL refused, OpenAPI 3.0, Swagger 2.0 refused, external $refs never fetched, reload.
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../../src/config/demo.js';
import { ConfigError } from '../../../src/config/load.js';
import { EGRESS_REFUSED } from '../../../src/egress/check-egress.js';
import { bearer, buildTestApp, API_KEY, OPERATOR_KEY, testConfig } from '../../helpers/build.js';
import { installLoopbackGuard } from '../../helpers/loopback-guard.js';
import { startPetsApi, type PetsApi } from '../../helpers/pets-api.js';

const fixtures = join(packageRoot(), 'test/fixtures/openapi');
const headers = bearer(API_KEY);
let api: PetsApi;
let dir: string;

beforeAll(async () => {
  api = await startPetsApi();
  dir = await mkdtemp(join(tmpdir(), 'toolgate-openapi-'));
});
afterAll(async () => {
  await api?.close();
  await rm(dir, { recursive: true, force: true });
});

const toolNames = async (app: Awaited<ReturnType<typeof buildTestApp>>) =>
  ((await app.inject({ url: '/v1/tools', headers })).json().tools as Array<{ name: string }>).map((tool) => tool.name);
const execute = (app: Awaited<ReturnType<typeof buildTestApp>>, name: string, args: object) =>
  app.inject({ method: 'POST', url: '/v1/execute', headers, payload: { name, arguments: args } });

describe('OpenAPI import: egress', () => {
  it('refuses a call whose base URL resolves to a private address, without any traffic to it', async () => {
    const guard = installLoopbackGuard();
    const resolved: string[] = [];
    try {
      const app = await buildTestApp(
        testConfig({ openapi: [{ name: 'pets', spec: join(fixtures, 'pets-3.1.yaml'), baseUrl: 'http://pets.internal.test/v1' }] }),
        { resolve: async (host) => (resolved.push(host), ['10.20.30.40']) },
      );
      try {
        const res = (await execute(app, 'pets_getPet', { petId: 1 })).json();
        expect(res).toMatchObject({ ok: false, error: { errorType: 'UPSTREAM_ERROR' } });
        // One wording whatever the host resolved to (docs/security-model.md#egress): no DNS oracle.
        expect(res.error.error).toBe(EGRESS_REFUSED);
      } finally {
        await app.close();
      }
      const unresolvable = await buildTestApp(
        testConfig({ openapi: [{ name: 'pets', spec: join(fixtures, 'pets-3.1.yaml'), baseUrl: 'http://pets.internal.test/v1' }] }),
        { resolve: async () => Promise.reject(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' })) },
      );
      try {
        expect((await execute(unresolvable, 'pets_getPet', { petId: 1 })).json().error.error).toBe(EGRESS_REFUSED);
      } finally {
        await unresolvable.close();
      }
      expect(resolved).toContain('pets.internal.test');
      expect(guard.violations).toEqual([]);
      expect(guard.dialled).toEqual([]);
    } finally {
      guard.uninstall();
    }
  });

  it('refuses loopback too unless egress.allow lists it', async () => {
    const app = await buildTestApp(testConfig({ openapi: [{ name: 'pets', spec: join(fixtures, 'pets-3.1.yaml'), baseUrl: `${api.base}/v1` }] }));
    try {
      api.seen.length = 0;
      const res = (await execute(app, 'pets_getPet', { petId: 1 })).json();
      expect(res.error.error).toBe(EGRESS_REFUSED);
      expect(api.seen).toHaveLength(0);
    } finally {
      await app.close();
    }
  });

  it('fetches a document from a URL through the egress guard (allowlisted) and revalidates it on reload', async () => {
    const document = (await readFile(join(fixtures, 'pets-3.1.yaml'), 'utf8')).replace('https://pets.example.com/v1', '/v1');
    let fetches = 0;
    api.routes.set('/spec.yaml', (request, reply) => {
      fetches += 1;
      if (request.headers['if-none-match'] === '"v1"') return reply(304, '', { etag: '"v1"' });
      reply(200, document, { 'content-type': 'application/yaml', etag: '"v1"' });
    });
    const config = testConfig({ egress: { allow: ['127.0.0.1'] }, openapi: [{ name: 'pets', url: `${api.base}/spec.yaml` }] });
    const app = await buildTestApp(config, { loadConfig: async () => config });
    try {
      expect(await toolNames(app)).toContain('pets_getPet');
      // A relative server URL resolves against the document's URL.
      expect((await execute(app, 'pets_getPet', { petId: 1 })).json()).toMatchObject({ ok: true, output: '{"id":1,"name":"Rex","tag":null}' });
      const reloaded = await app.inject({ method: 'POST', url: '/v1/admin/reload', headers: bearer(OPERATOR_KEY) });
      expect(reloaded.statusCode).toBe(200);
      expect(fetches).toBe(2);
      expect(await toolNames(app)).toContain('pets_getPet');
    } finally {
      await app.close();
      api.routes.delete('/spec.yaml');
    }
  });

  it('does not start when the document URL is a private address that is not allowlisted', async () => {
    const config = testConfig({ openapi: [{ name: 'pets', url: `${api.base}/spec.yaml` }] });
    await expect(buildTestApp(config)).rejects.toThrow('config /openapi pets: document http://127.0.0.1');
    await expect(buildTestApp(config)).rejects.toThrow(/127\.0\.0\.1 is a loopback address/);
  });

  it('never fetches an external $ref', async () => {
    const path = join(dir, 'external-ref.json');
    api.routes.set('/external.json', (_request, reply) => reply(200, JSON.stringify({ type: 'string' })));
    await writeFile(
      path,
      JSON.stringify({
        openapi: '3.1.0',
        info: { title: 'x', version: '1' },
        paths: { '/things/{id}': { get: { operationId: 'getThing', parameters: [{ name: 'id', in: 'path', required: true, schema: { $ref: `${api.base}/external.json` } }], responses: {} } } },
      }),
    );
    api.seen.length = 0;
    const app = await buildTestApp(testConfig({ egress: { allow: ['127.0.0.1'] }, openapi: [{ name: 'ext', spec: path, baseUrl: api.base }] }));
    try {
      const tool = ((await app.inject({ url: '/v1/tools', headers })).json().tools as Array<{ name: string; inputSchema: { properties: object } }>).find((t) => t.name === 'ext_getThing');
      // The unresolved reference becomes an open schema.
      expect(tool?.inputSchema.properties).toEqual({ id: {} });
      expect(api.seen).toHaveLength(0);
    } finally {
      await app.close();
      api.routes.delete('/external.json');
    }
  });
});

describe('OpenAPI import: versions', () => {
  it('imports OpenAPI 3.0 (nullable and boolean exclusiveMinimum translated) and calls it', async () => {
    const app = await buildTestApp(testConfig({ egress: { allow: ['127.0.0.1'] }, openapi: [{ name: 'pets30', spec: join(fixtures, 'pets-3.0.json'), baseUrl: `${api.base}/v1` }] }));
    try {
      const tools = (await app.inject({ url: '/v1/tools', headers })).json().tools as Array<{ name: string; inputSchema: Record<string, unknown> }>;
      expect(tools.find((tool) => tool.name === 'pets30_getPet')?.inputSchema).toEqual({
        type: 'object',
        properties: { petId: { type: 'integer', exclusiveMinimum: 0 }, nickname: { type: ['string', 'null'] } },
        required: ['petId'],
        additionalProperties: false,
      });
      expect((await execute(app, 'pets30_getPet', { petId: 0 })).json().error).toMatchObject({ errorType: 'VALIDATION_ERROR' });
      expect((await execute(app, 'pets30_createPet', { body: { name: 'Kit', tag: null } })).json()).toMatchObject({ ok: true, output: '{"id":7,"name":"Kit","tag":null}' });
    } finally {
      await app.close();
    }
  });

  it('refuses Swagger 2.0 with a message that says what to do', async () => {
    const config = testConfig({ openapi: [{ name: 'old', spec: join(fixtures, 'swagger-2.0.json'), baseUrl: api.base }] });
    const error = await buildTestApp(config).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('config /openapi old: document');
    expect((error as Error).message).toContain('Swagger 2.0 documents are not imported: convert it to OpenAPI 3 first');
  });
});

describe('OpenAPI import: where a fetched document may send calls', () => {
  it("refuses a fetched document's server on another origin unless baseUrl names it, and sends nothing there", async () => {
    const other = await startPetsApi('127.0.0.2');
    const document = (await readFile(join(fixtures, 'pets-3.1.yaml'), 'utf8')).replace('https://pets.example.com/v1', `${other.base}/v1`);
    api.routes.set('/elsewhere.yaml', (_request, reply) => reply(200, document, { 'content-type': 'application/yaml' }));
    try {
      const egress = { allow: ['127.0.0.1', '127.0.0.2'] };
      const error = await buildTestApp(testConfig({ egress, openapi: [{ name: 'pets', url: `${api.base}/elsewhere.yaml` }] })).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain(`the document's server ${other.base} is not where the document came from (${api.base}): set baseUrl to call it`);
      expect(other.seen).toHaveLength(0);

      // The operator's explicit choice is honoured.
      const app = await buildTestApp(testConfig({ egress, openapi: [{ name: 'pets', url: `${api.base}/elsewhere.yaml`, baseUrl: `${other.base}/v1` }] }));
      try {
        expect((await execute(app, 'pets_getPet', { petId: 1 })).json()).toMatchObject({ ok: true });
        expect(other.seen.length).toBeGreaterThan(0);
      } finally {
        await app.close();
      }
    } finally {
      api.routes.delete('/elsewhere.yaml');
      await other.close();
    }
  });
});

describe('OpenAPI import: reload', () => {
  it('re-reads the document; one that fails to parse keeps the old tools and the reload answer says why', async () => {
    const path = join(dir, 'pets.yaml');
    await copyFile(join(fixtures, 'pets-3.1.yaml'), path);
    const config = testConfig({ egress: { allow: ['127.0.0.1'] }, openapi: [{ name: 'pets', spec: path, baseUrl: `${api.base}/v1` }] });
    const app = await buildTestApp(config, { loadConfig: async () => config });
    try {
      await writeFile(path, 'openapi: 3.1.0\npaths: [unclosed');
      const refused = await app.inject({ method: 'POST', url: '/v1/admin/reload', headers: bearer(OPERATOR_KEY) });
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toMatchObject({ code: 'TG_CONFIG_INVALID' });
      expect(refused.json().message).toMatch(/^config \/openapi pets: document .*pets\.yaml: not valid JSON or YAML/);
      expect((await execute(app, 'pets_getPet', { petId: 1 })).json().ok).toBe(true);

      const edited = (await readFile(join(fixtures, 'pets-3.1.yaml'), 'utf8')).replace('operationId: getNote', 'operationId: readNote');
      await writeFile(path, edited);
      expect((await app.inject({ method: 'POST', url: '/v1/admin/reload', headers: bearer(OPERATOR_KEY) })).statusCode).toBe(200);
      const names = await toolNames(app);
      expect(names).toContain('pets_readNote');
      expect(names).not.toContain('pets_getNote');
    } finally {
      await app.close();
    }
  });
});

describe('OpenAPI import: reload during a call', () => {
  it('lets a call that started before a reload finish on its connection', async () => {
    // A POST: not retried, so a connection cut by the reload would show as a failure.
    api.routes.set('/v1/pets', (_request, reply) => void setTimeout(() => reply(201, '{"id":8,"name":"Slow"}'), 400));
    const config = testConfig({ egress: { allow: ['127.0.0.1'] }, openapi: [{ name: 'pets', spec: join(fixtures, 'pets-3.1.yaml'), baseUrl: `${api.base}/v1` }] });
    const app = await buildTestApp(config, { loadConfig: async () => config });
    try {
      const inFlight = execute(app, 'pets_createPet', { body: { name: 'Slow' } });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await app.inject({ method: 'POST', url: '/v1/admin/reload', headers: bearer(OPERATOR_KEY) })).statusCode).toBe(200);
      expect((await inFlight).json()).toMatchObject({ ok: true, output: '{"id":8,"name":"Slow"}' });
    } finally {
      await app.close();
      api.routes.delete('/v1/pets');
    }
  });
});

describe('OpenAPI import: redirects', () => {
  it('follows a same-origin redirect of a read-only call and refuses one to another host', async () => {
    const other = await startPetsApi('127.0.0.2');
    api.routes.set('/v1/pets/5', (_request, reply) => reply(302, '', { location: '/v1/pets/1' }));
    api.routes.set('/v1/pets/6', (_request, reply) => reply(302, '', { location: `${other.base}/v1/pets/1` }));
    const app = await buildTestApp(
      testConfig({ egress: { allow: ['127.0.0.1', '127.0.0.2'] }, openapi: [{ name: 'pets', spec: join(fixtures, 'pets-3.1.yaml'), baseUrl: `${api.base}/v1` }] }),
    );
    try {
      expect((await execute(app, 'pets_getPet', { petId: 5 })).json()).toMatchObject({ ok: true, output: '{"id":1,"name":"Rex","tag":null}' });
      const refused = (await execute(app, 'pets_getPet', { petId: 6 })).json();
      expect(refused.error).toMatchObject({ errorType: 'UPSTREAM_ERROR' });
      expect(refused.error.error).toMatch(/^API answered HTTP 302 with a redirect that is not followed/);
      expect(other.seen).toHaveLength(0);
    } finally {
      await app.close();
      await other.close();
      api.routes.delete('/v1/pets/5');
      api.routes.delete('/v1/pets/6');
    }
  });
});
