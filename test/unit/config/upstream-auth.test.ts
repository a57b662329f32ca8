import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { validateConfigObject } from '../../../src/config/load.js';

const key = randomBytes(32).toString('base64');
const jira = (auth: Record<string, unknown>) => ({ mcp: { global: [{ id: 'jira', transport: 'streamable-http', url: 'https://jira.test/mcp', auth }] } });
const load = (raw: Record<string, unknown>) => validateConfigObject(raw, '/', undefined);
const userOAuth = { type: 'userOAuth', issuer: 'https://idp.test', clientId: 'toolgate' };

describe('upstream auth in the configuration', () => {
  it('takes an auth object on a remote global service and an OpenAPI entry, with defaults filled', () => {
    const config = load({ server: { publicUrl: 'https://toolgate.test' }, credentials: { keys: [{ id: 'k1', key }] }, ...jira(userOAuth) });
    const entry = config.mcp.global[0];
    expect(entry && 'auth' in entry ? entry.auth : undefined).toMatchObject({ type: 'userOAuth', scopes: [], timeoutMs: 5000 });
  });

  it('refuses userOAuth without vault keys or a public URL, and an OpenAPI auth without an authorization server', () => {
    expect(() => load({ server: { publicUrl: 'https://toolgate.test' }, ...jira(userOAuth) })).toThrow('config /mcp/global/0/auth: userOAuth keeps refresh tokens encrypted: configure credentials.keys');
    expect(() => load({ credentials: { keys: [{ id: 'k1', key }] }, ...jira(userOAuth) })).toThrow(/needs server.publicUrl/);
    // A remote MCP service without one finds it through its own metadata (RFC 9728); an OpenAPI entry cannot.
    expect(() => load(jira({ type: 'clientCredentials', clientId: 'toolgate' }))).not.toThrow();
    // Only a discovered server may register the client (RFC 7591), and its secret needs the vault.
    expect(() => load({ credentials: { keys: [{ id: 'k1', key }] }, ...jira({ type: 'clientCredentials' }) })).not.toThrow();
    expect(() => load(jira({ type: 'clientCredentials' }))).toThrow('config /mcp/global/0/auth: a registered client\'s secret is kept encrypted: configure credentials.keys');
    expect(() => load(jira({ type: 'clientCredentials', issuer: 'https://idp.test' }))).toThrow(/give "clientId"/);
    expect(() => load({ openapi: [{ name: 'wiki', spec: '/x.json', auth: { type: 'clientCredentials', clientId: 'toolgate' } }] })).toThrow('config /openapi/0/auth: give "issuer" (discovery) or "tokenUrl"');
    expect(() => load(jira({ type: 'userOAuth', tokenUrl: 'https://idp.test/token', clientId: 'toolgate' }))).toThrow(/needs "issuer" or "authorizationUrl"/);
  });

  it('refuses vault keys that are not 32 bytes, duplicate key ids, auth on a stdio service, and a public URL with a trailing slash', () => {
    expect(() => load({ credentials: { keys: [{ id: 'k1', key: 'c2hvcnQ=' }] } })).toThrow('config /credentials/keys/0/key: must be 32 bytes, base64');
    expect(() => load({ credentials: { keys: [{ id: 'k1', key }, { id: 'k1', key }] } })).toThrow(/declared twice/);
    expect(() => load({ mcp: { global: [{ id: 'x', transport: 'stdio', command: 'x', auth: userOAuth }] } })).toThrow(/invalid/);
    expect(() => load({ server: { publicUrl: 'https://toolgate.test/' } })).toThrow(/invalid/);
    const both = { ...jira({ type: 'clientCredentials', issuer: 'https://idp.test', clientId: 'toolgate' }), openapi: [{ name: 'jira', spec: '/x.json', auth: { type: 'clientCredentials', issuer: 'https://idp.test', clientId: 'toolgate' } }] };
    expect(() => load(both)).toThrow('config /openapi/0/name: "jira" is also an MCP service id; an entry with auth needs a name of its own');
  });

  it('refuses a discovered authorization server that would receive a credential of toolgate\'s, unless the operator lists it', () => {
    // The service's own metadata would name where the caller's token (or the operator's secret) goes.
    expect(() => load(jira({ type: 'tokenExchange', clientId: 'toolgate' }))).toThrow(
      'config /mcp/global/0/auth: the caller\'s token (tokenExchange) would go to whichever authorization server the service names; set "issuer" or "tokenUrl", or list the servers it may name in "trustedIssuers"',
    );
    expect(() => load(jira({ type: 'clientCredentials', clientId: 'toolgate', clientSecret: 's' }))).toThrow(/^config \/mcp\/global\/0\/auth: the clientSecret would go to whichever/);
    expect(() => load(jira({ type: 'tokenExchange', clientId: 'toolgate', trustedIssuers: ['https://idp.test'] }))).not.toThrow();
    expect(() => load(jira({ type: 'tokenExchange', clientId: 'toolgate', tokenUrl: 'https://idp.test/token' }))).not.toThrow();
    expect(() => load(jira({ type: 'clientCredentials', clientId: 'toolgate', clientSecret: 's', trustedIssuers: ['https://idp.test'] }))).not.toThrow();
    // A list that cannot apply, or names a server in clear over a network, is refused too.
    expect(() => load(jira({ type: 'tokenExchange', clientId: 'toolgate', issuer: 'https://idp.test', trustedIssuers: ['https://idp.test'] }))).toThrow('config /mcp/global/0/auth/trustedIssuers: only for a remote MCP service');
    expect(() => load(jira({ type: 'tokenExchange', clientId: 'toolgate', trustedIssuers: ['http://idp.test'] }))).toThrow('config /mcp/global/0/auth/trustedIssuers/0: an authorization server must be https');
  });

  it('refuses an authorization server over plain http, except on a loopback address', () => {
    const keys = { server: { publicUrl: 'https://toolgate.test' }, credentials: { keys: [{ id: 'k1', key }] } };
    expect(() => load({ ...keys, ...jira({ ...userOAuth, issuer: 'http://idp.test' }) })).toThrow('config /mcp/global/0/auth/issuer: an authorization server must be https (plain http only on a loopback address)');
    expect(() => load(jira({ type: 'clientCredentials', tokenUrl: 'http://10.0.0.5/token', clientId: 'toolgate' }))).toThrow('config /mcp/global/0/auth/tokenUrl: an authorization server must be https');
    expect(() => load({ openapi: [{ name: 'wiki', spec: '/x.json', auth: { type: 'clientCredentials', issuer: 'https://idp.test', revocationUrl: 'http://idp.test/revoke', clientId: 'toolgate' } }] })).toThrow('config /openapi/0/auth/revocationUrl');
    for (const loopback of ['http://127.0.0.1:9000', 'http://localhost:9000', 'http://[::1]:9000']) {
      expect(() => load({ ...keys, ...jira({ ...userOAuth, issuer: loopback }) })).not.toThrow();
    }
  });
});
