// `auth` on users' own registered MCP servers (docs/security-model.md#user-mcp-servers): a user attaches their
// own connection (userOAuth) or client (clientCredentials) to their server; tokenExchange is refused; the
// server's credentials are its owner's alone — no other user, tenant or admin can see, connect or use them.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../../src/store/memory.js';
import type { StateStore } from '../../../src/store/types.js';
import { bearer, buildTestApp, scrapeMetrics, signToken } from '../../helpers/build.js';
import { expectVictimServedDuring, repeatUntil, VICTIM_FUNCTIONS, VICTIM_TENANT, VICTIM_TENANT_CONFIG, victimOf } from '../../helpers/victim-tenant.js';
import { AUDIENCES, call, connect, seen, startStage, type Stage } from './setup.js';

let stage: Stage;
let app: FastifyInstance;
let store: StateStore;
let alice: string;
let bob: string;
let carol: string;
let admin: string;
let globexAlice: string;
let victim: string;

const SECRET = 'alices-own-client-secret';
// The mock authorization server's id_token names the client `toolgate` (openid-client checks its aud).
const userOAuth = () => ({ type: 'userOAuth', issuer: stage.as.url, clientId: 'toolgate', clientSecret: SECRET, scopes: ['read'], resource: AUDIENCES.jira });

async function put(token: string, user: string, serviceId: string, body: Record<string, unknown>) {
  return app.inject({ method: 'PUT', url: `/v1/users/${user}/mcp-servers/${serviceId}`, headers: bearer(token), payload: body });
}

async function connectionsOf(token: string): Promise<Array<{ service: string; connected: boolean }>> {
  return (await app.inject({ url: '/v1/connections', headers: bearer(token) })).json<{ connections: Array<{ service: string; connected: boolean }> }>().connections;
}

beforeAll(async () => {
  stage = await startStage();
  store = createMemoryStore();
  app = await buildTestApp(stage.config({ functions: VICTIM_FUNCTIONS, tenants: { acme: { mcpServices: ['jira', 'robot', 'exch'] }, globex: {}, [VICTIM_TENANT]: VICTIM_TENANT_CONFIG } }), { store });
  victim = await victimOf(app);
  alice = await signToken({ sub: 'alice' });
  bob = await signToken({ sub: 'bob' });
  carol = await signToken({ sub: 'carol' });
  admin = await signToken({ sub: 'root', roles: ['admin'] });
  globexAlice = await signToken({ sub: 'alice', tenant: 'globex' });
});

afterAll(async () => {
  await app?.close();
  await stage?.close();
});

describe("auth on a user's own MCP server", () => {
  it('userOAuth: the owner connects their own account; the server is listed and called as them, its secret never listed back nor stored in plaintext', async () => {
    const created = await put(alice, 'alice', 'mine', { url: stage.jira.url, auth: userOAuth() });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ auth: { type: 'userOAuth', clientId: 'toolgate', hasClientSecret: true } });
    expect(created.body).not.toContain(SECRET);
    expect((await app.inject({ url: '/v1/users/alice/mcp-servers/mine', headers: bearer(alice) })).body).not.toContain(SECRET);
    expect(JSON.stringify(await store.scan(''))).not.toContain(SECRET);

    expect(await connectionsOf(alice)).toContainEqual(expect.objectContaining({ service: 'user_alice_service_mine', connected: false }));
    // The server wants a token even to list: its tools appear once alice is connected.
    expect((await call(app, alice, 'user_alice_tool_whoami')).error?.errorType).toBe('UNKNOWN_TOOL');
    expect((await connect(app, alice, 'user_alice_service_mine', 'alice')).statusCode).toBe(200);
    expect(await connectionsOf(alice)).toContainEqual(expect.objectContaining({ service: 'user_alice_service_mine', connected: true }));
    const result = await call(app, alice, 'user_alice_tool_whoami');
    expect(seen(result)).toMatchObject({ sub: 'alice', client_id: 'toolgate', aud: AUDIENCES.jira });
    expect(result.trace).toMatchObject({ credential: { kind: 'user' } });
  });

  it("clientCredentials: the owner's own client calls their server", async () => {
    const created = await put(carol, 'carol', 'bot', { url: stage.robot.url, auth: { type: 'clientCredentials', tokenUrl: `${stage.as.url}/token`, clientId: 'carols-bot', clientSecret: 'carols-secret', resource: AUDIENCES.robot } });
    expect(created.statusCode).toBe(201);
    expect(seen(await call(app, carol, 'user_carol_tool_whoami'))).toMatchObject({ sub: 'carols-bot', client_id: 'carols-bot', aud: AUDIENCES.robot });
  });

  it('refuses tokenExchange, naming why', async () => {
    const refused = await put(bob, 'bob', 'exch', { url: stage.exch.url, auth: { type: 'tokenExchange', issuer: stage.as.url, clientId: 'x', resource: AUDIENCES.exch } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ code: 'TG_BAD_REQUEST', message: expect.stringMatching(/tokenExchange is not allowed on a user's own server: it would exchange your verified token/) });
    expect((await app.inject({ url: '/v1/users/bob/mcp-servers/exch', headers: bearer(bob) })).statusCode).toBe(404);
  });

  it('refuses an authorization server the egress policy forbids, and a static Authorization header beside auth', async () => {
    const metadata = await put(bob, 'bob', 'meta', { url: stage.jira.url, auth: { ...userOAuth(), issuer: 'http://169.254.169.254/' } });
    expect(metadata.statusCode).toBe(400);
    expect(metadata.json()).toMatchObject({ code: 'TG_EGRESS_DENIED' });
    const both = await put(bob, 'bob', 'both', { url: stage.jira.url, headers: { Authorization: 'Bearer static' }, auth: userOAuth() });
    expect(both.json()).toMatchObject({ code: 'TG_BAD_REQUEST', message: expect.stringMatching(/exclude each other/) });
  });

  it("another user, another tenant's same sub, and an admin can neither see, connect nor use alice's server credentials", async () => {
    expect(await connectionsOf(bob)).not.toContainEqual(expect.objectContaining({ service: 'user_alice_service_mine' }));
    expect((await app.inject({ method: 'POST', url: '/v1/connections/user_alice_service_mine', headers: bearer(bob) })).statusCode).toBe(404);
    expect((await call(app, bob, 'user_alice_tool_whoami')).error?.errorType).toBe('UNKNOWN_TOOL');
    // alice of another tenant is another principal: no server, no connection.
    expect((await app.inject({ method: 'POST', url: '/v1/connections/user_alice_service_mine', headers: bearer(globexAlice) })).statusCode).toBe(404);
    expect((await call(app, globexAlice, 'user_alice_tool_whoami')).error?.errorType).toBe('UNKNOWN_TOOL');
    // A tenant admin may manage alice's servers, but never attach credentials that act as her.
    const byAdmin = await put(admin, 'alice', 'planted', { url: stage.jira.url, auth: userOAuth() });
    expect(byAdmin.statusCode).toBe(403);
    // The admin's view of alice's server shows no secret either.
    const listed = await app.inject({ url: '/v1/users/alice/mcp-servers', headers: bearer(admin) });
    expect(listed.statusCode).toBe(200);
    expect(listed.body).not.toContain(SECRET);
    expect((await app.inject({ url: '/v1/admin/connections', headers: bearer(admin) })).body).not.toContain('user_alice_service_mine');
  });

  it('bob registering the same server and client gets his own connection, never alice\'s', async () => {
    expect((await put(bob, 'bob', 'mine', { url: stage.jira.url, auth: userOAuth() })).statusCode).toBe(201);
    expect(await connectionsOf(bob)).toContainEqual(expect.objectContaining({ service: 'user_bob_service_mine', connected: false }));
    expect((await call(app, bob, 'user_bob_tool_whoami')).error?.errorType).toBe('UNKNOWN_TOOL');
    expect((await connect(app, bob, 'user_bob_service_mine', 'bob')).statusCode).toBe(200);
    expect(seen(await call(app, bob, 'user_bob_tool_whoami'))).toMatchObject({ sub: 'bob' });
    expect(seen(await call(app, alice, 'user_alice_tool_whoami'))).toMatchObject({ sub: 'alice' });
  });

  it('a connection never follows its server elsewhere: re-registered at another URL it is forgotten, and it goes with the server', async () => {
    const connected = async () => (await connectionsOf(alice)).find((row) => row.service === 'user_alice_service_mine')?.connected;
    expect(await connected()).toBe(true);
    // Same auth, same name, another URL: alice's token for the old server is not sent to the new one.
    expect((await put(alice, 'alice', 'mine', { url: stage.exch.url, auth: userOAuth() })).statusCode).toBe(200);
    expect(await connected()).toBe(false);
    expect((await connect(app, alice, 'user_alice_service_mine', 'alice')).statusCode).toBe(200);
    expect(await connected()).toBe(true);
    expect((await app.inject({ method: 'DELETE', url: '/v1/users/alice/mcp-servers/mine', headers: bearer(alice) })).statusCode).toBe(204);
    expect(await connected()).toBeUndefined();
    expect((await store.scan('uauth:conn:')).filter((entry) => entry.key.endsWith(':user_alice_service_mine'))).toEqual([]);
    // The list of connected users it was on goes with its last user (docs/security-model.md#store-keys-users-create).
    expect((await store.scan('uauth:index:')).filter((entry) => entry.key.endsWith(':user_alice_service_mine'))).toEqual([]);
  });
});

describe("metric labels of users' own servers", () => {
  /** The token-request series on the metrics listener. */
  const tokenSeries = async (): Promise<string[]> => (await scrapeMetrics(app)).split('\n').filter((line) => line.startsWith('toolgate_upstream_token_'));
  const register = async (user: string, serviceId: string): Promise<void> => {
    const token = await signToken({ sub: user });
    const auth = { type: 'clientCredentials', tokenUrl: `${stage.as.url}/token`, clientId: `${user}-bot`, clientSecret: 'card-secret', resource: AUDIENCES.robot };
    expect((await put(token, user, serviceId, { url: stage.robot.url, auth })).statusCode).toBe(201);
    expect(seen(await call(app, token, `user_${user}_tool_whoami`))).toMatchObject({ sub: `${user}-bot` });
  };

  it('registering and calling 10 more users\' servers adds no token-request series: they count under one bucket; another tenant is served meanwhile', async () => {
    await register('mallory0', 'card0');
    const before = await tokenSeries();
    expect(before).toContainEqual(expect.stringMatching(/^toolgate_upstream_token_fetches_total\{service="__user__",kind="service"\} [1-9]/));
    // The 10 users register and call; then, until the victim tenant was sampled during the attack (at most 8
    // batches), each removes its server and registers it again under a new id, and calls it.
    await expectVictimServedDuring(app, victim, (rounds) =>
      repeatUntil(rounds, async (batch) => {
        for (let i = 1; i <= 10; i += 1) {
          if (batch > 0) {
            const url = `/v1/users/mallory${i}/mcp-servers/card${i}${batch === 1 ? '' : `-${batch - 1}`}`;
            expect((await app.inject({ method: 'DELETE', url, headers: bearer(await signToken({ sub: `mallory${i}` })) })).statusCode).toBe(204);
          }
          await register(`mallory${i}`, batch === 0 ? `card${i}` : `card${i}-${batch}`);
        }
      }, { maxRepeats: 8 }),
    );
    const after = await tokenSeries();
    expect(after.map((line) => line.replace(/ [0-9.e+]+$/, ''))).toEqual(before.map((line) => line.replace(/ [0-9.e+]+$/, '')));
    expect(after.join('\n')).not.toMatch(/mallory|card/);
  });
});
