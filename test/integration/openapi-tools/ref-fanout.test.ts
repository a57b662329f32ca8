// An imported document whose `$ref`s fan out (each level naming the next four times: 4^10 leaves from a few
// hundred bytes) must cost the gateway next to nothing: the operation is refused at import with a clear
// reason, the document's other operations are imported, and while the document is imported again and again
// another tenant's cheap calls keep answering (docs/security-model.md#schema-size-bounds).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, OPERATOR_KEY, signToken, testConfig } from '../../helpers/build.js';

const LEVELS = 10;
const LIVENESS_BOUND_MS = 1000;

function fanOutDocument(): object {
  const schemas: Record<string, unknown> = { L0: { type: 'string' } };
  for (let level = 1; level <= LEVELS; level += 1) {
    const next = { $ref: `#/components/schemas/L${level - 1}` };
    schemas[`L${level}`] = { type: 'object', properties: { a: next, b: next, c: next, d: next } };
  }
  const json = (ref: string) => ({ required: true, content: { 'application/json': { schema: { $ref: ref } } } });
  return {
    openapi: '3.0.3',
    info: { title: 'fan-out', version: '1' },
    paths: {
      '/ping': { get: { operationId: 'ping', responses: { 200: { description: 'ok' } } } },
      // Shares the lower levels with the bomb: only the bomb is refused.
      '/small': { post: { operationId: 'small', requestBody: json('#/components/schemas/L2'), responses: { 200: { description: 'ok' } } } },
      '/bomb': { post: { operationId: 'bomb', requestBody: json(`#/components/schemas/L${LEVELS}`), responses: { 200: { description: 'ok' } } } },
    },
    // A response bomb is never resolved at all: responses are not read.
    components: { schemas },
  };
}

let dir: string;
let app: FastifyInstance;
let attacker: string;
let victim: string;
let generation = 0;

const config = () =>
  testConfig({
    // Each reload changes the entry (its timeout), so the document is imported again every time.
    openapi: [{ name: 'fan', spec: join(dir, 'fan.json'), baseUrl: 'http://127.0.0.1:9', timeoutMs: 5000 + (generation++ % 2) }],
    tenants: { acme: { functions: ['fan_*'] }, globex: { functions: ['get_weather'] } },
  });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-fanout-'));
  await writeFile(join(dir, 'fan.json'), JSON.stringify(fanOutDocument()));
  app = await buildTestApp(config(), { loadConfig: async () => config() });
  attacker = await signToken({ tenant: 'acme', sub: 'mallory' });
  victim = await signToken({ tenant: 'globex', sub: 'victor' });
}, 120_000);
afterAll(async () => {
  await app?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('an imported document with $ref fan-out', () => {
  it('refuses the one operation at import, with its reason, and imports the others', async () => {
    const status = app.gateway.status().find((upstream) => upstream.service === 'openapi:fan');
    expect(status?.detail).toMatchObject({ operations: 3, imported: 2, skipped: { 'schema too large': 1 } });
    const listed = await app.inject({ url: '/v1/tools', headers: bearer(attacker) });
    expect(listed.statusCode).toBe(200);
    const names = (listed.json().tools as Array<{ name: string }>).map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['fan_ping', 'fan_small']));
    expect(names).not.toContain('fan_bomb');
    const called = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(attacker), payload: { name: 'fan_small', arguments: { body: 1 } } });
    expect(called.json().error.errorType).toBe('VALIDATION_ERROR');
  });

  it("keeps another tenant's calls answering within 1 s while the document is imported again and listed", async () => {
    let attacking = true;
    const attack = (async () => {
      try {
        for (let round = 0; round < 3; round += 1) {
          const reloaded = await app.inject({ method: 'POST', url: '/v1/admin/reload', headers: bearer(OPERATOR_KEY) });
          expect(reloaded.statusCode).toBe(200);
          for (let i = 0; i < 5; i += 1) expect((await app.inject({ url: '/v1/tools', headers: bearer(attacker) })).statusCode).toBe(200);
        }
      } finally {
        attacking = false;
      }
    })();
    const latencies: number[] = [];
    const deadline = Date.now() + 60_000;
    while ((attacking || latencies.length < 5) && latencies.length < 500 && Date.now() < deadline) {
      const started = performance.now();
      const answer = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(victim), payload: { name: 'get_weather', arguments: { city: 'Oslo' } } });
      latencies.push(performance.now() - started);
      expect(answer.json().ok).toBe(true);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await attack;
    expect(Math.max(...latencies)).toBeLessThan(LIVENESS_BOUND_MS);
    expect(app.gateway.current().catalog.tools.some((tool) => tool.name === 'fan_bomb')).toBe(false);
  }, 120_000);
});
