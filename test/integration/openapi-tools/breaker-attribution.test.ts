// A hostile tenant must not be able to open a shared upstream's circuit breaker for everyone: failures the
// gateway itself caused (a header HTTP cannot carry, an answer past the size limit) are never counted, and
// a real failure seen by one tenant's calls opens that tenant's circuit only
// (docs/security-model.md#breaker-attribution).
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken, testConfig } from '../../helpers/build.js';
import { startPetsApi, type PetsApi } from '../../helpers/pets-api.js';

// Default threshold (5) and a cool-down far longer than the test: an opened circuit stays open.
const policies = { retry: false, 'circuit-breaker': { failureThreshold: 5, cooldownMs: 600_000 } };
let api: PetsApi;
let app: FastifyInstance;
let attacker: string;
let victim: string;

beforeAll(async () => {
  api = await startPetsApi();
  // An answer of 11 MiB, past the 10 MiB the gateway reads.
  const bomb = JSON.stringify({ id: 2, name: 'x'.repeat(11 * 1024 * 1024) });
  api.routes.set('/v1/pets/2', (_request, reply) => reply(200, bomb));
  app = await buildTestApp(
    testConfig({
      egress: { allow: ['127.0.0.1'] },
      openapi: [{ name: 'pets', spec: './test/fixtures/openapi/pets-3.1.yaml', baseUrl: `${api.base}/v1`, timeoutMs: 5000 }],
      tenants: { acme: { functions: ['pets_*'], policies }, globex: { functions: ['pets_*'], policies } },
    }),
  );
  attacker = await signToken({ tenant: 'acme', sub: 'mallory' });
  victim = await signToken({ tenant: 'globex', sub: 'victor' });
});
afterAll(async () => {
  await app?.close();
  await api?.close();
});

const run = async (token: string, name: string, args: object) =>
  (await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name, arguments: args } })).json() as {
    ok: boolean;
    error?: { errorType: string; error: string };
  };

describe('circuit breaker attribution', () => {
  it('never counts a header value the HTTP client refuses: the call is the caller\'s VALIDATION_ERROR, nothing is sent', async () => {
    api.seen.length = 0;
    for (let i = 0; i < 8; i++) {
      const result = await run(attacker, 'pets_getPet', { petId: 1, 'X-Trace-Tag': 'é\u2028' });
      expect(result.error?.errorType).toBe('VALIDATION_ERROR');
    }
    expect(api.seen).toHaveLength(0);
    expect((await run(attacker, 'pets_getPet', { petId: 1 })).ok).toBe(true);
    expect((await run(victim, 'pets_getPet', { petId: 1 })).ok).toBe(true);
  });

  it('never counts a response bomb (the gateway\'s size limit, not the upstream\'s health)', async () => {
    for (let i = 0; i < 8; i++) {
      const result = await run(attacker, 'pets_getPet', { petId: 2 });
      expect(result.error?.errorType).toBe('UPSTREAM_ERROR');
      expect(result.error?.error).toContain('exceeds 10485760 bytes');
    }
    expect((await run(attacker, 'pets_getPet', { petId: 1 })).ok).toBe(true);
    expect((await run(victim, 'pets_getPet', { petId: 1 })).ok).toBe(true);
  });

  it('opens only the circuit of the tenant whose calls saw a real upstream failure; the other tenant keeps being served', async () => {
    for (let i = 0; i < 5; i++) expect((await run(attacker, 'pets_breakServer', {})).error?.errorType).toBe('UPSTREAM_ERROR');
    // acme's own circuit is open: it is refused without reaching the API.
    api.seen.length = 0;
    expect((await run(attacker, 'pets_getPet', { petId: 1 })).error?.errorType).toBe('CIRCUIT_OPEN');
    expect(api.seen).toHaveLength(0);
    // globex never saw a failure: served, every time.
    for (let i = 0; i < 10; i++) expect((await run(victim, 'pets_getPet', { petId: 1 })).ok).toBe(true);
    expect(api.seen).toHaveLength(10);

    const circuits = app.policyDeps.circuits!;
    expect(circuits.stateOf('openapi:pets', 'acme')).toBe('open');
    expect(circuits.stateOf('openapi:pets', 'globex')).toBe('closed');
  });
});
