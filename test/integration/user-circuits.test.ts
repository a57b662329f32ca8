// A user's own servers have circuits of their own (docs/security-model.md#breaker-attribution): two users
// whose user keys coincide — one's plain `sub` equals the 12 hex characters another's `sub` hashes to —
// share a service name (`user_<userKey>_service_<id>`) but never a circuit; and while one hammers its
// failing server, another tenant is served within a second.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userServiceKey } from '../../src/registry/user-names.js';
import { sha256Hex } from '../../src/shared/canonical-json.js';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';
import { startMcpUpstream, textTool, type TestUpstream } from '../helpers/mcp-upstream.js';
import { expectVictimServedDuring, repeatUntil, VICTIM_FUNCTIONS, VICTIM_TENANT, VICTIM_TENANT_CONFIG, victimOf } from '../helpers/victim-tenant.js';

const HASHED_SUB = 'mallory the second';
const PLAIN_SUB = sha256Hex(HASHED_SUB).slice(0, 12);
let healthy: TestUpstream;
let failing: TestUpstream;
let app: FastifyInstance;
let hashed: string;
let plain: string;
let victim: string;

beforeAll(async () => {
  healthy = await startMcpUpstream([textTool('lookup', () => 'fine')]);
  failing = await startMcpUpstream([{ definition: { name: 'lookup', inputSchema: { type: 'object' } }, call: () => ({ content: [{ type: 'text', text: 'broken' }], isError: true }) }]);
  app = await buildTestApp(
    testConfig({
      egress: { allow: ['127.0.0.1'] },
      functions: VICTIM_FUNCTIONS,
      tenants: { acme: { policies: { 'circuit-breaker': { failureThreshold: 2 } } }, [VICTIM_TENANT]: VICTIM_TENANT_CONFIG },
    }),
  );
  victim = await victimOf(app);
  hashed = await signToken({ sub: HASHED_SUB });
  plain = await signToken({ sub: PLAIN_SUB });
  for (const [token, sub, upstream] of [[hashed, HASHED_SUB, failing], [plain, PLAIN_SUB, healthy]] as const) {
    const put = await app.inject({ method: 'PUT', url: `/v1/users/${encodeURIComponent(sub)}/mcp-servers/svc`, headers: bearer(token), payload: { url: upstream.url } });
    expect(put.statusCode).toBe(201);
  }
});
afterAll(async () => {
  await app?.close();
  await Promise.all([healthy?.close(), failing?.close()]);
});

const execute = (token: string) => app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name: `user_${PLAIN_SUB}_tool_lookup`, arguments: {} } });

describe("users' circuits", () => {
  it('two users with the same user key never share a circuit: one user\'s failing server does not open the other\'s, and another tenant is served meanwhile', async () => {
    expect(userServiceKey(HASHED_SUB, 'svc')).toBe(userServiceKey(PLAIN_SUB, 'svc'));
    await expectVictimServedDuring(app, victim, async (rounds) => {
      for (let i = 0; i < 2; i += 1) expect((await execute(hashed)).json().error?.errorType).toBe('UPSTREAM_ERROR');
      expect((await execute(hashed)).json().error?.errorType).toBe('CIRCUIT_OPEN');
      expect((await execute(plain)).json()).toMatchObject({ ok: true, output: 'fine' });
      // The attacker keeps calling its open circuit (at most 300 times) while the victim is sampled: each refused at once.
      await repeatUntil(rounds, async () => {
        expect((await execute(hashed)).json().error?.errorType).toBe('CIRCUIT_OPEN');
        expect((await execute(plain)).json()).toMatchObject({ ok: true, output: 'fine' });
        await new Promise((resolve) => setTimeout(resolve, 10));
      }, { maxRepeats: 300 });
    });
  });
});
