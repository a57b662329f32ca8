// An MCP upstream that names its own authorization server (RFC 9728; docs/security-model.md#upstream-identity):
// a service configured with neither `issuer` nor `tokenUrl` answers 401 with `resource_metadata`, toolgate
// follows it to the real authorization server on loopback — and refuses metadata that describes another
// resource, URLs the egress policy forbids, and huge or malformed answers.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../../src/store/memory.js';
import type { GatewayConfig } from '../../../src/config/types.js';
import { bearer, buildTestApp, JWT_SECRET, signToken, testConfig } from '../../helpers/build.js';
import { startAuthServer, type TestAuthServer } from '../../helpers/oauth-as.js';
import { startWhoamiMcp, type ProtectedUpstream, type PublishedMetadata } from '../../helpers/protected-upstreams.js';
import { authorize, call, PUBLIC_URL, seen } from './setup.js';

let as: TestAuthServer;
let disc: ProtectedUpstream;
let bot: ProtectedUpstream;
let evil: ProtectedUpstream;
let reg: ProtectedUpstream;
let regUser: ProtectedUpstream;
const published = { disc: { body: '', served: 0 } as PublishedMetadata, bot: { body: '', served: 0 } as PublishedMetadata, evil: { body: '', served: 0 } as PublishedMetadata, reg: { body: '', served: 0 } as PublishedMetadata, regUser: { body: '', served: 0 } as PublishedMetadata };
let config: GatewayConfig;
const store = createMemoryStore();
const asked: string[] = [];
let app: FastifyInstance;
let alice: string;

/** The injected resolver: the internal names an upstream might point toolgate at, never a real lookup. */
async function resolve(hostname: string): Promise<string[]> {
  asked.push(hostname);
  if (hostname === 'idp.internal') return ['10.20.30.40'];
  if (hostname === 'meta.internal') return ['169.254.169.254'];
  throw new Error(`unexpected lookup of ${hostname}`);
}

const metadataOf = (upstream: ProtectedUpstream, extra: Record<string, unknown> = {}): string => JSON.stringify({ resource: upstream.url, authorization_servers: [as.url], ...extra });
// The secret goes only to a server the operator trusts (docs/security-model.md#where-credentials-go).
const auth = (type: string, extra: Record<string, unknown> = {}) => ({ type, clientId: 'toolgate', clientSecret: 'toolgate-secret', trustedIssuers: [as.url], scopes: ['read'], timeoutMs: 1000, ...extra });

async function connectStart(service: string): Promise<{ statusCode: number; body: string }> {
  const res = await app.inject({ method: 'POST', url: `/v1/connections/${service}`, headers: bearer(alice) });
  return { statusCode: res.statusCode, body: res.body };
}

beforeAll(async () => {
  as = await startAuthServer({ subjectSecret: JWT_SECRET });
  const options = (metadata: PublishedMetadata) => ({ issuer: as.url, jwksUrl: as.jwksUrl, metadata });
  [disc, bot, evil, reg, regUser] = await Promise.all(
    [published.disc, published.bot, published.evil, published.reg, published.regUser].map((metadata) => startWhoamiMcp(options(metadata))),
  );
  published.reg.body = metadataOf(reg);
  published.regUser.body = metadataOf(regUser);
  published.disc.body = metadataOf(disc);
  published.bot.body = metadataOf(bot);
  published.evil.body = metadataOf(evil, { resource: 'https://elsewhere.test/mcp' });
  const key = randomBytes(32).toString('base64');
  config = testConfig({
    server: { publicUrl: PUBLIC_URL },
    credentials: { keys: [{ id: 'k1', key }] },
    egress: { allow: ['127.0.0.1'] },
    mcp: {
      global: [
        { id: 'disc', transport: 'streamable-http', url: disc.url, prefix: true, auth: auth('userOAuth') },
        { id: 'bot', transport: 'streamable-http', url: bot.url, prefix: true, auth: auth('clientCredentials') },
        // No secret: listing its tools never discovers, so only the tests below ask.
        { id: 'evil', transport: 'streamable-http', url: evil.url, prefix: true, auth: auth('userOAuth', { clientSecret: undefined, trustedIssuers: undefined }) },
        // No client at all: toolgate registers one at the discovered server (RFC 7591).
        { id: 'reg', transport: 'streamable-http', url: reg.url, prefix: true, auth: { type: 'clientCredentials', scopes: ['read'], timeoutMs: 1000 } },
        { id: 'regUser', transport: 'streamable-http', url: regUser.url, prefix: true, auth: { type: 'userOAuth', scopes: ['read'], timeoutMs: 1000 } },
      ],
    },
    tenants: { acme: { mcpServices: ['disc', 'bot', 'evil', 'reg', 'regUser'] } },
  });
  app = await buildTestApp(config, { resolve, store });
  alice = await signToken({ sub: 'alice' });
});

afterAll(async () => {
  await app?.close();
  await Promise.all([disc?.close(), bot?.close(), evil?.close(), reg?.close(), regUser?.close()]);
  await as?.close();
});

describe('RFC 9728 discovery of an upstream\'s authorization server', () => {
  it('clientCredentials: the 401 names the metadata, the metadata the server; the token is meant for the service', async () => {
    const result = await call(app, alice, 'bot_whoami');
    expect(seen(result)).toMatchObject({ client_id: 'toolgate', aud: bot.url });
    expect(published.bot.served).toBeGreaterThan(0);
  });

  it('userOAuth: the connect flow runs against the discovered server and the call carries alice\'s token', async () => {
    const before = await call(app, alice, 'disc_whoami');
    expect(before.error?.errorType).toBe('CONNECTION_REQUIRED');
    const started = await connectStart('disc');
    expect(started.statusCode).toBe(200);
    const authorizationUrl = (JSON.parse(started.body) as { authorizationUrl: string }).authorizationUrl;
    expect(authorizationUrl.startsWith(as.url)).toBe(true);
    // The discovered resource goes with the request (RFC 8707), so the token is meant for this service only.
    expect(new URL(authorizationUrl).searchParams.get('resource')).toBe(disc.url);
    const done = await app.inject({ url: await authorize(authorizationUrl, 'alice') });
    expect(done.statusCode).toBe(200);
    expect(seen(await call(app, alice, 'disc_whoami'))).toMatchObject({ sub: 'alice', aud: disc.url });
  });
});

describe('hostile metadata', () => {
  it('refuses metadata whose resource is another service (RFC 9728 §3.3)', async () => {
    const grants = as.grants.length;
    const res = await connectStart('evil');
    expect(res.statusCode).toBe(502);
    expect(res.body).toContain('describes another resource');
    expect(as.grants.length).toBe(grants);
  });

  it('refuses an authorization server at an address the egress policy forbids, without connecting', async () => {
    published.evil.body = metadataOf(evil, { authorization_servers: ['http://idp.internal:8080'] });
    const res = await connectStart('evil');
    expect(res.statusCode).toBe(502);
    expect(res.body).toContain('URL refused by the egress policy');
    expect(res.body).not.toContain('10.20.30.40');
    expect(asked).toContain('idp.internal');
  });

  it('refuses a resource_metadata URL on another origin that the egress policy forbids (a cloud metadata address)', async () => {
    published.evil.body = metadataOf(evil);
    published.evil.metadataUrl = 'http://meta.internal/.well-known/oauth-protected-resource';
    const served = published.evil.served;
    const res = await connectStart('evil');
    expect(res.statusCode).toBe(502);
    expect(res.body).toContain('URL refused by the egress policy');
    expect(asked).toContain('meta.internal');
    expect(published.evil.served).toBe(served);
    delete published.evil.metadataUrl;
  });

  it('refuses huge and malformed metadata', async () => {
    published.evil.body = JSON.stringify({ resource: evil.url, authorization_servers: [as.url], padding: 'x'.repeat(100_000) });
    const huge = await connectStart('evil');
    expect(huge.statusCode).toBe(502);
    expect(huge.body).toContain('exceeds 65536 bytes');
    for (const body of ['{"resource": ', JSON.stringify({ resource: evil.url, authorization_servers: 'not a list' }), JSON.stringify({ resource: evil.url })]) {
      published.evil.body = body;
      const res = await connectStart('evil');
      expect(res.statusCode).toBe(502);
    }
  });

  it('discovers again after a failure: once the metadata is right, the flow starts', async () => {
    published.evil.body = metadataOf(evil);
    const res = await connectStart('evil');
    expect(res.statusCode).toBe(200);
    expect((JSON.parse(res.body) as { authorizationUrl: string }).authorizationUrl.startsWith(as.url)).toBe(true);
  });
});

describe('dynamic client registration (RFC 7591)', () => {
  it('two replicas sharing a store register one client, keep its secret sealed, and call with it', async () => {
    const before = as.registrations.length;
    as.registrationDelayMs = 300;
    // Two fresh replicas on one fresh store start and call at once: the lease lets one of them register.
    const shared = createMemoryStore();
    const [one, two] = await Promise.all([buildTestApp(config, { resolve, store: shared }), buildTestApp(config, { resolve, store: shared })]);
    try {
      const results = await Promise.all([call(one, alice, 'reg_whoami'), call(two, alice, 'reg_whoami'), call(one, alice, 'reg_whoami')]);
      const registered = as.registrations.slice(before);
      expect(registered).toHaveLength(1);
      for (const result of results) expect(seen(result)).toMatchObject({ client_id: registered[0]?.clientId, aud: reg.url });
      expect(registered[0]?.request).toMatchObject({ grant_types: ['client_credentials'], redirect_uris: [`${PUBLIC_URL}/oauth/callback`] });
      // The store holds the registration, never the secret in the clear.
      const raw = (await shared.scan('upstream-client:')).map((entry) => entry.value).join('');
      expect(raw).toContain(registered[0]?.clientId);
      expect(raw).not.toContain(registered[0]?.clientSecret);
    } finally {
      as.registrationDelayMs = 0;
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('forgets a registered client the server no longer knows (invalid_client) and registers anew, once', async () => {
    const shared = createMemoryStore();
    // Every call asks for a token: none is kept past its 1 s lifetime.
    as.expiresIn = 1;
    const one = await buildTestApp(config, { resolve, store: shared });
    try {
      const first = seen(await call(one, alice, 'reg_whoami')).client_id;
      expect(first).toMatch(/^registered-/);
      const before = as.registrations.length;
      as.forgottenClients.add(first as string);
      const second = seen(await call(one, alice, 'reg_whoami')).client_id;
      expect(second).toBe(as.registrations[before]?.clientId);
      expect(as.registrations.length).toBe(before + 1);
      // The store now names the new client, so every replica uses it.
      const raw = (await shared.scan('upstream-client:')).map((entry) => entry.value).join('');
      expect(raw).toContain(second);
      expect(seen(await call(one, alice, 'reg_whoami')).client_id).toBe(second);
      expect(as.registrations.length).toBe(before + 1);
    } finally {
      as.expiresIn = 3600;
      await one.close();
    }
  });

  it('refuses a registration endpoint the egress policy forbids, then registers a userOAuth client with the callback as redirect URI', async () => {
    const before = as.registrations.length;
    as.metadataOverrides = { registration_endpoint: 'http://idp.internal:8080/register' };
    try {
      const refused = await connectStart('regUser');
      expect(refused.statusCode).toBe(502);
      expect(refused.body).toContain('URL refused by the egress policy');
      expect(as.registrations.length).toBe(before);
    } finally {
      as.metadataOverrides = {};
    }
    const started = await connectStart('regUser');
    expect(started.statusCode).toBe(200);
    const registered = as.registrations.slice(before);
    expect(registered).toHaveLength(1);
    expect(registered[0]?.request).toMatchObject({ grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], redirect_uris: [`${PUBLIC_URL}/oauth/callback`] });
    const authorizationUrl = new URL((JSON.parse(started.body) as { authorizationUrl: string }).authorizationUrl);
    expect(authorizationUrl.searchParams.get('client_id')).toBe(registered[0]?.clientId);
  });
});
