// OAuth Client ID Metadata Documents (docs/security-model.md#client-id-metadata-document): toolgate serves its
// client metadata document under server.publicUrl, and an authorization server that accepts URL client ids
// (`client_id_metadata_document_supported`) fetches it and lets a user connect with it — no registration, no
// secret. The authorization server is real, on loopback; its fetch of https://toolgate.test/… is sent to the
// listening gateway. (The service's tools are not listed here: listing a userOAuth service without a client
// of its own has no credential, as before; the connection and the token it holds are what is checked.)
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, JWT_SECRET, signToken, testConfig } from '../../helpers/build.js';
import { startAuthServer, type TestAuthServer } from '../../helpers/oauth-as.js';
import { startWhoamiMcp, type ProtectedUpstream, type PublishedMetadata } from '../../helpers/protected-upstreams.js';
import { connect, PUBLIC_URL } from './setup.js';

const DOCUMENT_URL = `${PUBLIC_URL}/oauth/client-metadata.json`;
let as: TestAuthServer;
let notes: ProtectedUpstream;
const published: PublishedMetadata = { body: '', served: 0 };
let app: FastifyInstance;
let alice: string;

/** No clientId: toolgate finds the server through the service and identifies itself by its document. */
const gatewayConfig = () =>
  testConfig({
    server: { publicUrl: PUBLIC_URL },
    credentials: { keys: [{ id: 'k1', key: randomBytes(32).toString('base64') }] },
    egress: { allow: ['127.0.0.1'] },
    mcp: { global: [{ id: 'notes', transport: 'streamable-http', url: notes.url, prefix: true, auth: { type: 'userOAuth', scopes: ['read'], timeoutMs: 1000 } }] },
    tenants: { acme: { mcpServices: ['notes'] } },
  });

beforeAll(async () => {
  as = await startAuthServer({ subjectSecret: JWT_SECRET });
  notes = await startWhoamiMcp({ issuer: as.url, jwksUrl: as.jwksUrl, metadata: published });
  published.body = JSON.stringify({ resource: notes.url, authorization_servers: [as.url] });
  app = await buildTestApp(gatewayConfig());
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  // The authorization server's fetch of toolgate's public URL reaches this gateway (and only its document).
  as.clientMetadataFetch = (url) => fetch(url.replace(PUBLIC_URL, base), { redirect: 'manual' });
  alice = await signToken({ sub: 'alice' });
});

afterAll(async () => {
  await app?.close();
  await notes?.close();
  await as?.close();
});

describe('client id metadata document', () => {
  it('is served under server.publicUrl, names its own URL as client id and the OAuth callback, and holds no secret', async () => {
    const res = await app.inject({ url: '/oauth/client-metadata.json' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      client_id: DOCUMENT_URL,
      client_name: 'toolgate',
      client_uri: PUBLIC_URL,
      redirect_uris: [`${PUBLIC_URL}/oauth/callback`],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
  });

  it('lets a user connect at a server that fetches it: the URL is the client id, nothing is registered, no secret is sent', async () => {
    const registrations = as.registrations.length;
    const done = await connect(app, alice, 'notes', 'alice');
    expect(done.statusCode).toBe(200);
    // The server fetched the document while authorizing and again for the token request.
    expect(as.metadataDocuments.map(({ at, url }) => [at, url])).toEqual([
      ['authorize', DOCUMENT_URL],
      ['token', DOCUMENT_URL],
    ]);
    expect(as.urlClientCredentials).toEqual([false]);
    expect(as.registrations.length).toBe(registrations);
    const listed = await app.inject({ url: '/v1/connections', headers: bearer(alice) });
    expect(listed.json<{ connections: Array<{ service: string; connected: boolean }> }>().connections).toContainEqual(expect.objectContaining({ service: 'notes', connected: true }));
    // The access token alice's connection holds was issued to the document's URL, for alice.
    const access = as.issued.map((token) => token.split('.')).filter((parts) => parts.length === 3).map((parts) => JSON.parse(Buffer.from(parts[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>);
    expect(access.at(-1)).toMatchObject({ sub: 'alice', client_id: DOCUMENT_URL, aud: notes.url });
  });

  it('answers 404 where no server.publicUrl is configured', async () => {
    const bare = await buildTestApp(testConfig());
    try {
      expect((await bare.inject({ url: '/oauth/client-metadata.json' })).statusCode).toBe(404);
    } finally {
      await bare.close();
    }
  });
});

describe('a server that does not take metadata documents', () => {
  it('gets a registered client as before (RFC 7591)', async () => {
    const before = as.registrations.length;
    as.metadataOverrides = { client_id_metadata_document_supported: false };
    const other = await buildTestApp(gatewayConfig());
    try {
      const started = await other.inject({ method: 'POST', url: '/v1/connections/notes', headers: bearer(alice) });
      expect(started.statusCode).toBe(200);
      expect(as.registrations.length).toBe(before + 1);
      expect(new URL(started.json<{ authorizationUrl: string }>().authorizationUrl).searchParams.get('client_id')).toBe(as.registrations.at(-1)?.clientId);
    } finally {
      as.metadataOverrides = {};
      await other.close();
    }
  });
});
