// The authorization-server clients upstream identity keeps (one per distinct auth object and service) are
// bounded: reloads that change URLs, and users' own servers, cannot grow them without end.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamAuthConfig } from '../../../src/config/types.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { createUpstreamIdentity } from '../../../src/upstream-auth/identity.js';
import { testConfig } from '../../helpers/build.js';

let server: Server;
let issuer: string;
let discoveries = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/.well-known/openid-configuration') {
      discoveries += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer, token_endpoint: `${issuer}/token` }));
      return;
    }
    // A 1 s token: never kept, so every call asks the server (and needs its client).
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: 'token', token_type: 'Bearer', expires_in: 1 })));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
});

describe('authorization-server clients', () => {
  it('are kept up to the bound, the least recently used going first', async () => {
    const config = testConfig();
    const identity = createUpstreamIdentity({ store: createMemoryStore(), config: () => config, reachesTools: () => false, maxAuthServers: 2 });
    const principal = { tenant: 'acme', user: 'alice', roles: [], claims: {} };
    const auth = (clientId: string): UpstreamAuthConfig => ({ type: 'clientCredentials', issuer, clientId, clientSecret: 'secret', scopes: [], timeoutMs: 1000 });
    const fetchWith = (clientId: string) => identity.credentialsFor(`svc-${clientId}`, auth(clientId)).forCall(principal, AbortSignal.timeout(5000));
    await fetchWith('a');
    await fetchWith('a');
    expect(discoveries).toBe(1);
    await fetchWith('b');
    await fetchWith('a');
    await fetchWith('c');
    // a was used after b: b went, a stayed.
    expect(discoveries).toBe(3);
    await fetchWith('a');
    expect(discoveries).toBe(3);
    await fetchWith('b');
    expect(discoveries).toBe(4);
  });
});
