import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, exportJWK, exportSPKI, generateKeyPair, type JWK } from 'jose';
import type { FastifyInstance } from 'fastify';
import { bearer, buildTestApp, JWT_SECRET, signToken, testConfig } from '../helpers/build.js';

const listTools = (app: FastifyInstance, headers: Record<string, string>) => app.inject({ method: 'GET', url: '/v1/tools', headers });

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

describe('authentication with HS256 JWTs and API keys', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await buildTestApp();
  });
  afterAll(async () => app.close());

  it('accepts a valid token', async () => {
    expect((await listTools(app, bearer(await signToken()))).statusCode).toBe(200);
  });

  it('answers 401 with WWW-Authenticate when the token is missing', async () => {
    const res = await listTools(app, {});
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(res.json()).toEqual({ statusCode: 401, code: 'TG_UNAUTHENTICATED', error: 'Unauthorized', message: 'missing bearer token' });
  });

  it('refuses a token signed with another secret (forged)', async () => {
    const forged = await signToken({}, { secret: 'another-secret-that-is-also-32-bytes-long!' });
    const res = await listTools(app, bearer(forged));
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toContain('invalid_token');
  });

  it('refuses a token whose payload was edited after signing', async () => {
    const [header, , signature] = (await signToken({ tenant: 'acme' })).split('.');
    const edited = `${header}.${base64url({ tenant: 'globex', sub: 'alice', iss: 'https://issuer.test', aud: 'toolgate', exp: Math.floor(Date.now() / 1000) + 60 })}.${signature}`;
    expect((await listTools(app, bearer(edited))).statusCode).toBe(401);
  });

  it('refuses an expired token, past the clock tolerance', async () => {
    const expired = await signToken({}, { expiresIn: Math.floor(Date.now() / 1000) - 120 });
    const res = await listTools(app, bearer(expired));
    expect(res.statusCode).toBe(401);
    expect(res.json().message).toBe('token expired');
  });

  it('writes the WWW-Authenticate error_description as an RFC 7235 quoted-string', async () => {
    const res = await listTools(app, bearer(await signToken({ tenant: undefined })));
    const header = String(res.headers['www-authenticate']);
    // Every auth-param is token=token or token=quoted-string; an unescaped quote in a value breaks this.
    const params = /^Bearer ((?:[a-z_]+=(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*")(?:, |$))+)$/.exec(header);
    expect(params, header).not.toBeNull();
    const description = /error_description="((?:[^"\\]|\\.)*)"/.exec(header)?.[1]?.replace(/\\(.)/g, '$1');
    expect(description).toBe('token has no string "tenant" claim');
    expect(description).toBe(res.json().message);
  });

  it('refuses a token without exp by default', async () => {
    const forever = await new SignJWT({ tenant: 'acme' })
      .setProtectedHeader({ alg: 'HS256' }).setSubject('alice').setIssuer('https://issuer.test').setAudience('toolgate').setIssuedAt()
      .sign(new TextEncoder().encode(JWT_SECRET));
    const res = await listTools(app, bearer(forever));
    expect(res.statusCode).toBe(401);
    expect(res.json().message).toBe('token has no expiry (exp)');
  });

  it('refuses a token that is not valid yet (nbf)', async () => {
    const early = await new SignJWT({ tenant: 'acme' })
      .setProtectedHeader({ alg: 'HS256' }).setSubject('alice').setIssuer('https://issuer.test').setAudience('toolgate')
      .setNotBefore(Math.floor(Date.now() / 1000) + 600).setExpirationTime('20m')
      .sign(new TextEncoder().encode(JWT_SECRET));
    expect((await listTools(app, bearer(early))).statusCode).toBe(401);
  });

  it('refuses a wrong audience and a wrong issuer', async () => {
    expect((await listTools(app, bearer(await signToken({}, { audience: 'someone-else' })))).statusCode).toBe(401);
    expect((await listTools(app, bearer(await signToken({}, { issuer: 'https://evil.test' })))).statusCode).toBe(401);
  });

  it('refuses alg "none" and an HS256 token presented as RS256', async () => {
    const payload = { tenant: 'acme', sub: 'alice', iss: 'https://issuer.test', aud: 'toolgate', exp: Math.floor(Date.now() / 1000) + 60 };
    const none = `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(payload)}.`;
    expect((await listTools(app, bearer(none))).statusCode).toBe(401);
    const [, body, signature] = (await signToken()).split('.');
    const relabelled = `${base64url({ alg: 'RS256' })}.${body}.${signature}`;
    expect((await listTools(app, bearer(relabelled))).statusCode).toBe(401);
  });

  it('answers 401 when the tenant claim is missing or not a string', async () => {
    expect((await listTools(app, bearer(await signToken({ tenant: undefined })))).statusCode).toBe(401);
    expect((await listTools(app, bearer(await signToken({ tenant: ['acme'] })))).statusCode).toBe(401);
    expect((await listTools(app, bearer(await signToken({ tenant: 42 })))).statusCode).toBe(401);
  });

  it('answers 403 TG_UNKNOWN_TENANT for a tenant not in config, matching exactly', async () => {
    for (const tenant of ['initech', 'ACME', ' acme', 'acme ']) {
      const res = await listTools(app, bearer(await signToken({ tenant })));
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('TG_UNKNOWN_TENANT');
    }
  });

  it('refuses an unknown API key and garbage tokens', async () => {
    for (const token of ['not-a-key', 'a.b.c', 'x'.repeat(9000)]) {
      expect((await listTools(app, bearer(token))).statusCode).toBe(401);
    }
  });

  it('never takes the tenant from headers, query strings or bodies', async () => {
    const token = await signToken({ tenant: 'acme' });
    const res = await app.inject({
      method: 'POST', url: '/v1/execute?tenant=globex', headers: { ...bearer(token), 'x-toolgate-tenant': 'globex', 'x-tenant': 'globex' },
      payload: { name: 'get_weather', arguments: { city: 'x' }, tenant: 'globex' },
    });
    // The body schema refuses the unknown field outright.
    expect(res.statusCode).toBe(400);
  });
});

describe('authentication placement', () => {
  it('refuses a route that authenticates in preHandler: it would wait for the body of a request it then refuses', async () => {
    const app = await buildTestApp();
    try {
      expect(() => app.get('/v1/late-auth', { preHandler: app.authenticate }, async () => 'x')).toThrow('authenticate is an onRequest hook, not a preHandler');
    } finally {
      await app.close();
    }
  });
});

describe('token lifetime settings', () => {
  const unsigned = (iat: number | undefined, exp: number | undefined) => {
    let jwt = new SignJWT({ tenant: 'acme' }).setProtectedHeader({ alg: 'HS256' }).setSubject('alice').setIssuer('https://issuer.test').setAudience('toolgate');
    if (iat !== undefined) jwt = jwt.setIssuedAt(iat);
    if (exp !== undefined) jwt = jwt.setExpirationTime(exp);
    return jwt.sign(new TextEncoder().encode(JWT_SECRET));
  };
  const jwtConfig = (extra: Record<string, unknown>) =>
    testConfig({ auth: { jwt: { secret: JWT_SECRET, issuer: 'https://issuer.test', audience: 'toolgate', ...extra } } });

  it('accepts a token without exp only when requireExp is false', async () => {
    const app = await buildTestApp(jwtConfig({ requireExp: false }));
    try {
      expect((await listTools(app, bearer(await unsigned(undefined, undefined)))).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('refuses tokens living longer than maxTokenLifetimeSec, measured from iat or else from now', async () => {
    const app = await buildTestApp(jwtConfig({ maxTokenLifetimeSec: 3600 }));
    try {
      const now = Math.floor(Date.now() / 1000);
      expect((await listTools(app, bearer(await unsigned(now, now + 3600)))).statusCode).toBe(200);
      const long = await listTools(app, bearer(await unsigned(now, now + 3601)));
      expect(long.statusCode).toBe(401);
      expect(long.json().message).toBe('token lifetime exceeds 3600 s');
      // Issued long ago but still living too long in total.
      expect((await listTools(app, bearer(await unsigned(now - 7200, now + 60)))).statusCode).toBe(401);
      // Without iat the remaining lifetime counts.
      expect((await listTools(app, bearer(await unsigned(undefined, now + 600)))).statusCode).toBe(200);
      expect((await listTools(app, bearer(await unsigned(undefined, now + 86_400)))).statusCode).toBe(401);
      // An iat in the future does not stretch the bound: the lifetime counts from now.
      expect((await listTools(app, bearer(await unsigned(now + 30 * 86_400, now + 30 * 86_400 + 60)))).statusCode).toBe(401);
    } finally {
      await app.close();
    }
  });

  it('refuses a 10-year token by default (24 h), and accepts it when maxTokenLifetimeSec allows it', async () => {
    const now = Math.floor(Date.now() / 1000);
    const tenYears = 10 * 365 * 86_400;
    const byDefault = await buildTestApp(jwtConfig({}));
    const raised = await buildTestApp(jwtConfig({ maxTokenLifetimeSec: 11 * 365 * 86_400 }));
    try {
      const token = await unsigned(now, now + tenYears);
      const refused = await listTools(byDefault, bearer(token));
      expect(refused.statusCode).toBe(401);
      expect(refused.json().message).toBe('token lifetime exceeds 86400 s');
      // A day-long token, as identity providers issue by default, still passes.
      expect((await listTools(byDefault, bearer(await unsigned(now, now + 86_400)))).statusCode).toBe(200);
      expect((await listTools(raised, bearer(token))).statusCode).toBe(200);
    } finally {
      await byDefault.close();
      await raised.close();
    }
  });
});

describe('global operators (auth.operators)', () => {
  it('makes a listed JWT subject of a tenant an operator, and no roles claim or other tenant can', async () => {
    const app = await buildTestApp(testConfig({
      auth: { jwt: { secret: JWT_SECRET, issuer: 'https://issuer.test', audience: 'toolgate' }, operators: [{ tenant: 'acme', sub: 'root' }] },
    }));
    try {
      const reload = async (token: string) => app.inject({ method: 'POST', url: '/v1/admin/reload', headers: bearer(token) });
      expect((await reload(await signToken({ sub: 'root' }))).json()).toMatchObject({ reloaded: true });
      for (const token of [
        await signToken({ sub: 'root', tenant: 'globex' }),
        await signToken({ sub: 'alice', roles: ['admin', 'operator'] }),
      ]) {
        const res = await reload(token);
        expect(res.statusCode).toBe(403);
        expect(res.json().code).toBe('TG_FORBIDDEN');
      }
    } finally {
      await app.close();
    }
  });

  it('refuses a config whose operator names an API key that does not exist', () => {
    expect(() => testConfig({ auth: { apiKeys: [], operators: [{ apiKey: 'nope' }] } })).toThrow('/auth/operators/0/apiKey: no API key with id "nope"');
  });
});

describe('asymmetric JWTs', () => {
  let jwksServer: Server;
  let app: FastifyInstance;
  let pemApp: FastifyInstance;
  let privateKey: CryptoKey;
  let otherKey: CryptoKey;

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256', { extractable: true });
    privateKey = pair.privateKey;
    otherKey = (await generateKeyPair('RS256')).privateKey;
    const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    jwksServer = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
    const { port } = jwksServer.address() as AddressInfo;
    app = await buildTestApp(testConfig({ auth: { jwt: { jwksUrl: `http://127.0.0.1:${port}/.well-known/jwks.json`, algorithms: ['RS256'], audience: 'toolgate' } } }));
    pemApp = await buildTestApp(testConfig({ auth: { jwt: { publicKey: await exportSPKI(pair.publicKey), algorithms: ['RS256'] } } }));
  });
  afterAll(async () => {
    await app.close();
    await pemApp.close();
    await new Promise((resolve) => jwksServer.close(resolve));
  });

  const rs256 = (key: CryptoKey, kid = 'k1') =>
    new SignJWT({ tenant: 'acme' }).setProtectedHeader({ alg: 'RS256', kid }).setSubject('bob').setAudience('toolgate').setExpirationTime('5m').sign(key);

  it('accepts a token signed by a key from the JWKS URL', async () => {
    const res = await listTools(app, bearer(await rs256(privateKey)));
    expect(res.statusCode).toBe(200);
  });

  it('refuses a token signed by a key outside the JWKS', async () => {
    expect((await listTools(app, bearer(await rs256(otherKey)))).statusCode).toBe(401);
  });

  it('refuses an HS256 token when only asymmetric keys are configured', async () => {
    expect((await listTools(app, bearer(await signToken()))).statusCode).toBe(401);
  });

  it('accepts a token verified with a PEM public key', async () => {
    expect((await listTools(pemApp, bearer(await rs256(privateKey)))).statusCode).toBe(200);
    expect((await listTools(pemApp, bearer(await rs256(otherKey)))).statusCode).toBe(401);
  });
});
