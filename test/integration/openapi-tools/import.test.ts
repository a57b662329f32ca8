import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken, testConfig, API_KEY } from '../../helpers/build.js';
import { startPetsApi, type PetsApi } from '../../helpers/pets-api.js';

const SERVICE_TOKEN = 'svc-pets-token-123';
let api: PetsApi;
let app: FastifyInstance;
let token: string;

beforeAll(async () => {
  api = await startPetsApi();
  app = await buildTestApp(
    testConfig({
      egress: { allow: ['127.0.0.1'] },
      openapi: [
        {
          name: 'pets',
          spec: './test/fixtures/openapi/pets-3.1.yaml',
          baseUrl: `${api.base}/v1`,
          headers: { authorization: `Bearer ${SERVICE_TOKEN}` },
          timeoutMs: 5000,
        },
      ],
      tenants: {
        acme: { functions: ['pets_*'], bindings: { pets_listOwnerPets: { owner: '${claims.org}' } } },
        globex: { functions: ['get_weather'] },
      },
    }),
  );
  token = await signToken({ org: 'acme-org' });
});
afterAll(async () => {
  await app?.close();
  await api?.close();
});

const run = (name: string, args: object, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/v1/execute', headers: { ...bearer(token), ...headers }, payload: { name, arguments: args } });
const listTools = async (bearerToken = token) =>
  (await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(bearerToken) })).json().tools as Array<Record<string, unknown>>;

describe('OpenAPI import: listing', () => {
  it('lists every non-deprecated operation as a tool for a tenant whose functions globs allow them', async () => {
    const tools = await listTools();
    const names = tools.map((tool) => tool.name).filter((name) => String(name).startsWith('pets_'));
    expect(names).toEqual(['pets_breakServer', 'pets_createPet', 'pets_deletePet', 'pets_getNote', 'pets_getPet', 'pets_listOwnerPets', 'pets_listPets']);
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get('pets_getPet')).toMatchObject({ source: 'function', readOnly: true, destructive: false, description: 'Get one pet' });
    expect(byName.get('pets_deletePet')).toMatchObject({ readOnly: false, destructive: true });
    expect(byName.get('pets_createPet')).toMatchObject({ readOnly: false, destructive: false, description: 'Create a pet\n\nAdds a pet to the store.' });
    // 7 operations: not deferred by default (deferral starts past 50).
    expect(byName.get('pets_getPet')!.deferLoading).toBeUndefined();
  });

  it('builds the input schema from path, query and header parameters and the JSON body ($refs resolved)', async () => {
    const tools = await listTools();
    const getPet = tools.find((tool) => tool.name === 'pets_getPet')!;
    expect(getPet.inputSchema).toEqual({
      type: 'object',
      properties: {
        petId: { type: 'integer', minimum: 1 },
        fields: { type: 'string', description: 'Fields to return' },
        'X-Trace-Tag': { type: 'string' },
      },
      required: ['petId'],
      additionalProperties: false,
    });
    const createPet = tools.find((tool) => tool.name === 'pets_createPet')!;
    // readOnly `id` is the server's to set: it is not part of the request schema.
    expect(createPet.inputSchema).toEqual({
      type: 'object',
      properties: {
        body: {
          type: 'object',
          required: ['name'],
          additionalProperties: false,
          properties: { name: { type: 'string', minLength: 1 }, tag: { type: ['string', 'null'] }, owner: { type: 'object', properties: { login: { type: 'string' } } } },
        },
      },
      required: ['body'],
      additionalProperties: false,
    });
  });

  it('shows a tenant none of them when its functions globs do not match', async () => {
    const other = await signToken({ tenant: 'globex' });
    expect((await listTools(other)).map((tool) => tool.name)).not.toContain('pets_getPet');
    const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(other), payload: { name: 'pets_getPet', arguments: { petId: 1 } } });
    // Exactly the answer for a name nobody has: the tenant learns nothing about what others import.
    expect(res.json().error).toEqual({ errorType: 'UNKNOWN_TOOL', error: 'unknown tool: pets_getPet' });
  });

  it("shows the document's status to an admin of a tenant that uses it, and not to one that does not", async () => {
    const upstreams = async (authorization: string) =>
      ((await app.inject({ url: '/v1/admin/upstreams', headers: { authorization } })).json().upstreams as Array<{ service: string; detail?: object }>).map((u) => u.service);
    expect(await upstreams(`Bearer ${API_KEY}`)).toContain('openapi:pets');
    const globexAdmin = await signToken({ tenant: 'globex', roles: ['admin'] });
    expect(await upstreams(`Bearer ${globexAdmin}`)).not.toContain('openapi:pets');
  });

  it('hides a bound parameter from the model-visible schema', async () => {
    const listOwnerPets = (await listTools()).find((tool) => tool.name === 'pets_listOwnerPets')!;
    expect(listOwnerPets.inputSchema).toEqual({ type: 'object', properties: {}, required: [], additionalProperties: false });
  });
});

describe('OpenAPI import: calls', () => {
  it("returns the API's JSON answer as compact JSON, with path, query and header parameters on the wire", async () => {
    api.seen.length = 0;
    const res = await run('pets_getPet', { petId: 1, fields: 'name,tag', 'X-Trace-Tag': 'blue' }, { 'x-toolgate-depth': '1' });
    const body = res.json();
    expect(body).toMatchObject({ ok: true, source: 'function', output: '{"id":1,"name":"Rex","tag":null}' });
    expect(api.seen).toHaveLength(1);
    const seen = api.seen[0]!;
    expect(seen.method).toBe('GET');
    expect(seen.url).toBe('/v1/pets/1?fields=name%2Ctag');
    expect(seen.headers['x-trace-tag']).toBe('blue');
    expect(seen.headers['x-toolgate-depth']).toBe('2');
    expect(body.trace).toMatchObject({ operationId: 'getPet', method: 'GET', url: `${api.base}/v1/pets/{petId}`, status: 200 });
    expect(typeof body.trace.durationMs).toBe('number');
  });

  it("sends the service's configured credentials and never the caller's Authorization", async () => {
    api.seen.length = 0;
    await run('pets_getPet', { petId: 1 });
    expect(api.seen[0]!.headers.authorization).toBe(`Bearer ${SERVICE_TOKEN}`);
    expect(JSON.stringify(api.seen[0]!.headers)).not.toContain(token);
  });

  it('sends the JSON body and answers the created resource', async () => {
    api.seen.length = 0;
    const res = await run('pets_createPet', { body: { name: 'Tom', tag: 'cat' } });
    expect(res.json()).toMatchObject({ ok: true, output: '{"id":7,"name":"Tom","tag":"cat"}' });
    expect(api.seen[0]).toMatchObject({ method: 'POST', url: '/v1/pets', body: '{"name":"Tom","tag":"cat"}' });
    expect(api.seen[0]!.headers['content-type']).toBe('application/json');
  });

  it('refuses arguments that do not match the schema before anything is sent', async () => {
    api.seen.length = 0;
    const res = await run('pets_createPet', { body: { name: 'Tom', id: 99 } });
    expect(res.json().error).toMatchObject({ errorType: 'VALIDATION_ERROR' });
    expect(api.seen).toHaveLength(0);
  });

  it('serialises array query parameters in the form style (one key per value)', async () => {
    api.seen.length = 0;
    await run('pets_listPets', { limit: 5, tag: ['a b', 'c&d'] });
    expect(api.seen[0]!.url).toBe('/v1/pets?limit=5&tag=a+b&tag=c%26d');
  });

  it('sets a bound parameter on the server from the caller’s claims; a model-sent value never reaches the API', async () => {
    api.seen.length = 0;
    const res = await run('pets_listOwnerPets', {});
    expect(res.json()).toMatchObject({ ok: true, output: '{"owner":"acme-org","pets":[]}' });
    const forged = await run('pets_listOwnerPets', { owner: 'other-org' });
    expect(forged.json().ok).toBe(false);
    expect(api.seen.map((request) => request.url)).toEqual(['/v1/owners/acme-org/pets']);
  });

  it('encodes path parameters so a value cannot add or climb path segments', async () => {
    api.seen.length = 0;
    const res = await run('pets_getNote', { name: 'a/../../admin?x=1' });
    expect(res.json()).toMatchObject({ ok: true, output: 'note a/../../admin?x=1' });
    expect(api.seen[0]!.url).toBe('/v1/notes/a%2F..%2F..%2Fadmin%3Fx%3D1');
    for (const name of ['..', '.']) {
      const refused = await run('pets_getNote', { name });
      expect(refused.json(), name).toMatchObject({ ok: false, error: { errorType: 'VALIDATION_ERROR' } });
    }
    expect(api.seen).toHaveLength(1);
    // An escaped dot is sent as the literal text it is, never as a dot segment.
    expect((await run('pets_getNote', { name: '%2e%2E' })).json().output).toBe('note %2e%2E');
  });

  it('maps HTTP 404 and 500 to UPSTREAM_ERROR with the status and a bounded excerpt; the trace holds no header value', async () => {
    const missing = (await run('pets_getPet', { petId: 42 })).json();
    expect(missing).toMatchObject({ ok: false, error: { errorType: 'UPSTREAM_ERROR', error: 'API answered HTTP 404: {"message":"no pet 42"}' } });
    expect(missing.trace).toMatchObject({ method: 'GET', url: `${api.base}/v1/pets/{petId}`, status: 404 });
    const broken = (await run('pets_breakServer', {})).json();
    expect(broken.error.errorType).toBe('UPSTREAM_ERROR');
    expect(broken.error.error).toMatch(/^API answered HTTP 500: database exploded x+…$/);
    expect(broken.error.error.length).toBeLessThan(600);
    expect(JSON.stringify([missing.trace, broken.trace])).not.toContain(SERVICE_TOKEN);
  });

  it('answers a client error once and never lets it open the shared circuit; a server error is retried', async () => {
    api.seen.length = 0;
    for (let i = 0; i < 6; i++) expect((await run('pets_getPet', { petId: 404 })).json().error.error).toContain('HTTP 404');
    expect(api.seen).toHaveLength(6);
    expect((await run('pets_getPet', { petId: 1 })).json().ok).toBe(true);
    api.seen.length = 0;
    await run('pets_breakServer', {});
    expect(api.seen.length).toBe(3); // the retry policy's default attempts for a read-only tool
  });

  it('answers text as text and an empty 204 with a short note', async () => {
    expect((await run('pets_getNote', { name: 'hello' })).json().output).toBe('note hello');
    expect((await run('pets_deletePet', { petId: 3 })).json()).toMatchObject({ ok: true, output: 'HTTP 204 (no content)' });
  });
});
