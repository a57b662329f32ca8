// Calls run as their user at the upstream (docs/security-model.md#upstream-identity): the must-shows with a
// real authorization server and upstreams that verify tokens and answer who called.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, bearer, buildTestApp, signToken } from '../../helpers/build.js';
import { AUDIENCES, call, connect, seen, startStage, type Stage, authorize } from './setup.js';

let stage: Stage;
let app: FastifyInstance;
let alice: string;
let bob: string;

beforeAll(async () => {
  stage = await startStage();
  app = await buildTestApp(stage.config());
  alice = await signToken({ sub: 'alice' });
  bob = await signToken({ sub: 'bob' });
});

afterAll(async () => {
  await app?.close();
  await stage?.close();
});

describe('userOAuth: each user connects and calls as themselves', () => {
  it('answers CONNECTION_REQUIRED with a working authorizationUrl, then runs the call as the user once connected', async () => {
    const before = await call(app, alice, 'jira_whoami');
    expect(before.ok).toBe(false);
    expect(before.error?.errorType).toBe('CONNECTION_REQUIRED');
    expect(before.output).toContain('jira');
    const trace = before.trace as { service: string; authorizationUrl: string };
    expect(trace.service).toBe('jira');
    // The model reads the link too (it is what the user must open), not only the trace.
    expect(JSON.parse(before.output.replace(/^TOOL_ERROR: /, '')).error).toContain(`open ${trace.authorizationUrl} to connect, then call again`);
    // The URL in the trace is a real flow: log in as alice, come back to the callback.
    const callback = await authorize(trace.authorizationUrl, 'alice');
    const done = await app.inject({ url: callback });
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('connected to jira');

    const after = await call(app, alice, 'jira_whoami');
    expect(seen(after)).toMatchObject({ sub: 'alice', aud: AUDIENCES.jira });
    expect(after.trace).toMatchObject({ credential: { kind: 'user', tokenHash: expect.stringMatching(/^[0-9a-f]{12}$/) } });
  });

  it('alice and bob call the same whoami tool and each gets their own sub', async () => {
    expect((await connect(app, bob, 'jira', 'bob')).statusCode).toBe(200);
    expect(seen(await call(app, alice, 'jira_whoami')).sub).toBe('alice');
    expect(seen(await call(app, bob, 'jira_whoami')).sub).toBe('bob');
  });

  it('lists the caller\'s connections without a token, and admins see who is connected', async () => {
    const mine = await app.inject({ url: '/v1/connections', headers: bearer(alice) });
    expect(mine.statusCode).toBe(200);
    const body = mine.json<{ connections: Array<{ service: string; connected: boolean }> }>();
    expect(body.connections).toEqual(expect.arrayContaining([expect.objectContaining({ service: 'jira', connected: true }), expect.objectContaining({ service: 'wiki', connected: false })]));
    for (const token of stage.as.issued) expect(mine.body).not.toContain(token);

    const admin = await app.inject({ url: '/v1/admin/connections', headers: bearer(API_KEY) });
    expect(admin.statusCode).toBe(200);
    const users = admin.json<{ connections: Array<{ service: string; user: string }> }>().connections.map((row) => `${row.service}:${row.user}`);
    expect(users.sort()).toEqual(['jira:alice', 'jira:bob']);
    for (const token of stage.as.issued) expect(admin.body).not.toContain(token);
    // Not an admin: refused.
    expect((await app.inject({ url: '/v1/admin/connections', headers: bearer(alice) })).statusCode).toBe(403);
  });

  it('an OpenAPI entry with userOAuth calls the REST API as the user', async () => {
    expect((await call(app, alice, 'wiki_whoami')).error?.errorType).toBe('CONNECTION_REQUIRED');
    expect((await connect(app, alice, 'wiki', 'alice')).statusCode).toBe(200);
    const result = await call(app, alice, 'wiki_whoami');
    expect(seen(result)).toMatchObject({ sub: 'alice', aud: AUDIENCES.wiki });
    expect(result.trace).toMatchObject({ credential: { kind: 'user' } });
  });

  it('an OpenAPI entry takes connections only from tenants whose pool can hold its tools', async () => {
    // globex's functions allowlist, and hooli's tools.allow, leave the wiki entry out of their pools.
    const narrowed = await buildTestApp(stage.config({ tenants: { acme: { mcpServices: ['jira'] }, globex: { functions: ['weather'] }, hooli: { tools: { allow: ['jira_*'] } } } }));
    try {
      const services = async (token: string) =>
        (await narrowed.inject({ url: '/v1/connections', headers: bearer(token) })).json<{ connections: Array<{ service: string }> }>().connections.map((row) => row.service);
      expect(await services(alice)).toEqual(['jira', 'wiki']);
      for (const tenant of ['globex', 'hooli']) {
        const outsider = await signToken({ sub: 'eve', tenant });
        expect(await services(outsider)).toEqual([]);
        expect((await narrowed.inject({ method: 'POST', url: '/v1/connections/wiki', headers: bearer(outsider) })).statusCode).toBe(404);
      }
    } finally {
      await narrowed.close();
    }
  });

  it('after DELETE the call needs a connection again, and the token was revoked at the authorization server', async () => {
    const revokedBefore = stage.as.revoked.size;
    const removed = await app.inject({ method: 'DELETE', url: '/v1/connections/jira', headers: bearer(bob) });
    expect(removed.json()).toEqual({ removed: true, revoked: true });
    expect(stage.as.revoked.size).toBe(revokedBefore + 1);
    expect((await call(app, bob, 'jira_whoami')).error?.errorType).toBe('CONNECTION_REQUIRED');
    // alice's connection is untouched.
    expect(seen(await call(app, alice, 'jira_whoami')).sub).toBe('alice');
  });

  it('refreshes an expired access token transparently, and a refused refresh answers CONNECTION_REQUIRED again', async () => {
    stage.as.expiresIn = 5; // below toolgate's early-renewal margin: every use refreshes
    try {
      expect((await connect(app, bob, 'jira', 'bob')).statusCode).toBe(200);
      const refreshes = stage.as.grants.filter((grant) => grant === 'refresh_token').length;
      expect(seen(await call(app, bob, 'jira_whoami')).sub).toBe('bob');
      expect(stage.as.grants.filter((grant) => grant === 'refresh_token').length).toBe(refreshes + 1);
      // Revoke every refresh token at the server: the next refresh is refused, and the user is asked to connect again.
      for (const token of stage.as.issued) stage.as.revoked.add(token);
      const refused = await call(app, bob, 'jira_whoami');
      expect(refused.error?.errorType).toBe('CONNECTION_REQUIRED');
    } finally {
      stage.as.expiresIn = 3600;
    }
  });
});

describe('clientCredentials and tokenExchange', () => {
  it('a clientCredentials service answers with the client\'s identity, fetched once for many callers', async () => {
    const before = stage.as.grants.filter((grant) => grant === 'client_credentials').length;
    const results = await Promise.all([alice, bob, alice, bob].map((token) => call(app, token, 'robot_whoami')));
    for (const result of results) expect(seen(result)).toMatchObject({ sub: 'toolgate', client_id: 'toolgate', aud: AUDIENCES.robot });
    expect(results[0]?.trace).toMatchObject({ credential: { kind: 'service' } });
    // The listing session fetched it already; calls reuse it.
    expect(stage.as.grants.filter((grant) => grant === 'client_credentials').length).toBe(before);
  });

  it('a tokenExchange service receives a token whose aud is the upstream and whose sub is the caller; the inbound token never reaches it', async () => {
    const result = await call(app, alice, 'exch_whoami');
    expect(seen(result)).toMatchObject({ sub: 'alice', aud: AUDIENCES.exch, client_id: 'toolgate' });
    expect(result.trace).toMatchObject({ credential: { kind: 'exchanged' } });
    expect(seen(await call(app, bob, 'exch_whoami')).sub).toBe('bob');
    for (const upstream of [stage.jira, stage.robot, stage.exch, stage.wiki]) {
      for (const header of upstream.authorizations) {
        expect(header).not.toContain(alice);
        expect(header).not.toContain(bob);
      }
    }
  });

  it('an API-key caller of a tokenExchange service gets a clear error, not a fallback', async () => {
    const result = await call(app, API_KEY, 'exch_whoami');
    expect(result.error?.errorType).toBe('PERMISSION_DENIED');
    expect(result.error?.error).toMatch(/API keys have no token to exchange/);
  });
});

describe('over toolgate\'s MCP endpoint', () => {
  it('a call lacking a connection is a tool error carrying the connect URL; after connecting the same call runs as the user', async () => {
    const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
    const grace = await signToken({ sub: 'grace' });
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: bearer(grace) } }));
    try {
      const refused = await client.callTool({ name: 'jira_whoami', arguments: {} });
      expect(refused.isError).toBe(true);
      const url = (refused._meta as Record<string, string> | undefined)?.['toolgate/authorizationUrl'] ?? '';
      expect(JSON.stringify(refused.content)).toContain(url);
      const callback = await authorize(url, 'grace');
      expect((await app.inject({ url: callback })).statusCode).toBe(200);
      const done = await client.callTool({ name: 'jira_whoami', arguments: {} });
      expect(done.isError).toBeFalsy();
      expect(JSON.stringify(done.content)).toContain('\\"sub\\":\\"grace\\"');
    } finally {
      await client.close();
    }
  });
});
