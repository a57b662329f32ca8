// OAuth discovery (MCP authorization): RFC 9728 metadata, the 401 challenge that points at it, and audience
// binding (RFC 8707), checked with the MCP SDK's own client discovery helpers against a listening gateway.
import { discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import { checkResourceAllowed } from '@modelcontextprotocol/sdk/shared/auth-utils.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, JWT_SECRET, signToken, testConfig } from '../helpers/build.js';

const IDP = 'https://idp.example.com';
const oauthConfig = (resource: string) =>
  testConfig({
    auth: {
      jwt: { secret: JWT_SECRET, issuer: IDP, audience: resource },
      resource,
      authorizationServers: [IDP],
      scopesSupported: ['tools:read', 'tools:call'],
    },
    tenants: { acme: { toolsets: { weather: { tools: ['get_weather'] } } } },
  });

let app: FastifyInstance;
let baseUrl: string;
beforeAll(async () => {
  let current = oauthConfig('https://toolgate.example.com');
  app = await buildTestApp(current, { loadConfig: async () => current });
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  // The public URL is known once listening: a reload sets it (metadata, challenge and audience follow the live config).
  current = oauthConfig(baseUrl);
  await app.reloadConfig();
});
afterAll(async () => app.close());

const postMcp = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });

describe('GET /.well-known/oauth-protected-resource', () => {
  it('describes toolgate as a protected resource, at the root and at the path-suffixed forms', async () => {
    for (const path of ['', '/mcp', '/mcp/weather', '/mcp/no-such-toolset']) {
      const res = await fetch(`${baseUrl}/.well-known/oauth-protected-resource${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(await res.json()).toEqual({
        resource: baseUrl,
        authorization_servers: [IDP],
        scopes_supported: ['tools:read', 'tools:call'],
        bearer_methods_supported: ['header'],
        resource_name: 'toolgate',
      });
    }
  });
});

describe('a 401 from /mcp', () => {
  it('carries resource_metadata, with and without a token, on /mcp and /mcp/<toolset>', async () => {
    const metadataUrl = `${baseUrl}/.well-known/oauth-protected-resource`;
    for (const path of ['/mcp', '/mcp/weather']) {
      const missing = await postMcp(path);
      expect(missing.status).toBe(401);
      expect(missing.headers.get('www-authenticate')).toBe(`Bearer realm="toolgate", resource_metadata="${metadataUrl}"`);
      const forged = await postMcp(path, bearer('not-a-token'));
      expect(forged.status).toBe(401);
      expect(forged.headers.get('www-authenticate')).toMatch(new RegExp(`^Bearer realm="toolgate", error="invalid_token", error_description="[^"]+", resource_metadata="${metadataUrl}"$`));
    }
  });

  it("lets the SDK's client find the authorization server from the 401 alone", async () => {
    const challenge = await postMcp('/mcp/weather');
    const { resourceMetadataUrl } = extractWWWAuthenticateParams(challenge);
    expect(resourceMetadataUrl?.href).toBe(`${baseUrl}/.well-known/oauth-protected-resource`);
    const metadata = await discoverOAuthProtectedResourceMetadata(`${baseUrl}/mcp/weather`, { resourceMetadataUrl });
    expect(metadata.authorization_servers).toEqual([IDP]);
    // Without the header hint, the SDK's own well-known lookup (path-suffixed first) finds the same document.
    expect(await discoverOAuthProtectedResourceMetadata(`${baseUrl}/mcp`)).toEqual(metadata);
    // The resource covers every MCP endpoint of the gateway, so the SDK accepts it for the URL it connects to.
    expect(checkResourceAllowed({ requestedResource: `${baseUrl}/mcp/weather`, configuredResource: metadata.resource })).toBe(true);
  });
});

describe('audience binding (RFC 8707)', () => {
  it('refuses a token minted for another resource and accepts one minted for toolgate', async () => {
    const forOther = await signToken({}, { issuer: IDP, audience: 'https://other-resource.example.com' });
    const refused = await postMcp('/mcp', bearer(forOther));
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const forToolgate = await signToken({}, { issuer: IDP, audience: baseUrl });
    expect((await postMcp('/mcp', bearer(forToolgate))).status).toBe(200);
  });
});

describe('without auth.resource', () => {
  it('answers 404 for the metadata and leaves resource_metadata out of the challenge', async () => {
    const plain = await buildTestApp();
    try {
      const metadata = await plain.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource' });
      expect(metadata.statusCode).toBe(404);
      expect(metadata.json()).toMatchObject({ code: 'TG_NOT_FOUND' });
      const challenge = await plain.inject({ method: 'POST', url: '/mcp', payload: {} });
      expect(challenge.headers['www-authenticate']).toBe('Bearer realm="toolgate"');
    } finally {
      await plain.close();
    }
  });
});
