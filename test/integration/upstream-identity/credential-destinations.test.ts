// Where a credential may go (docs/security-model.md#where-credentials-go): a hostile MCP upstream whose
// RFC 9728 metadata names its own authorization server never receives the caller's token (tokenExchange's
// subject token), whatever path it tries — naming an untrusted server, a trusted one's neighbour on the
// same origin, a redirect from a trusted server's metadata or token endpoint. Every trap records each
// request it receives; none may receive anything, also while the hostile upstreams are called again and
// again and another tenant is served within a second.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../../src/config/demo.js';
import type { GatewayConfig } from '../../../src/config/types.js';
import { buildTestApp, JWT_SECRET, signToken, testConfig } from '../../helpers/build.js';
import { startRecordingAuthServer, startRedirector, startSelfNamingUpstream, type Trap } from '../../helpers/credential-traps.js';
import { startAuthServer, type TestAuthServer } from '../../helpers/oauth-as.js';
import { expectVictimServedDuring, repeatUntil, VICTIM_FUNCTIONS, VICTIM_TENANT, VICTIM_TENANT_CONFIG, victimOf } from '../../helpers/victim-tenant.js';
import { call, connect, PUBLIC_URL } from './setup.js';

let as: TestAuthServer;
let trap: Trap;
let redirector: Trap;
const upstreams: Record<string, Trap> = {};
let app: FastifyInstance;
let alice: string;
let victim: string;

/** What each service's upstream names as its authorization server, by service id. */
const names: Record<string, () => string> = {
  trusted: () => as.url,
  untrusted: () => trap.url,
  bypassed: () => trap.url,
  neighbour: () => `${trap.url}/tenant-b`,
  redirected: () => redirector.url,
  // These name the trap too, but their auth names the server, so the metadata is never read.
  tokenRedirect: () => trap.url,
  issuerRedirect: () => trap.url,
  // A userOAuth service without a secret of the operator's may name any server; later it names the trap.
  flip: () => flipTo(),
};
let flipTo = (): string => as.url;

const exchange = (extra: Record<string, unknown>) => ({ type: 'tokenExchange', clientId: 'toolgate', timeoutMs: 1000, ...extra });

beforeAll(async () => {
  as = await startAuthServer({ subjectSecret: JWT_SECRET });
  trap = await startRecordingAuthServer();
  redirector = await startRedirector(trap.url);
  for (const [id, named] of Object.entries(names)) upstreams[id] = await startSelfNamingUpstream(named);
  const auths: Record<string, Record<string, unknown>> = {
    trusted: exchange({ trustedIssuers: [as.url] }),
    untrusted: exchange({ trustedIssuers: [as.url] }),
    // Validated with an issuer, which is then taken away: a configuration that skipped validation.
    bypassed: exchange({ issuer: as.url }),
    neighbour: exchange({ trustedIssuers: [`${trap.url}/tenant-a`] }),
    redirected: exchange({ trustedIssuers: [redirector.url] }),
    tokenRedirect: exchange({ tokenUrl: `${redirector.url}/token` }),
    issuerRedirect: exchange({ issuer: redirector.url }),
    flip: { type: 'userOAuth', clientId: 'toolgate', scopes: ['read'], timeoutMs: 1000 },
  };
  const config: GatewayConfig = testConfig({
    server: { publicUrl: PUBLIC_URL },
    credentials: { keys: [{ id: 'k1', key: randomBytes(32).toString('base64') }] },
    egress: { allow: ['127.0.0.1'] },
    mcp: { global: Object.entries(auths).map(([id, auth]) => ({ id, transport: 'streamable-http', url: upstreams[id]?.url, prefix: true, auth })) },
    functions: VICTIM_FUNCTIONS,
    tenants: { acme: { mcpServices: Object.keys(auths) }, [VICTIM_TENANT]: VICTIM_TENANT_CONFIG },
  });
  const bypassed = config.mcp.global.find((entry) => entry.id === 'bypassed');
  if (bypassed && 'auth' in bypassed && bypassed.auth) delete bypassed.auth.issuer;
  app = await buildTestApp(config);
  alice = await signToken({ sub: 'alice' });
  victim = await victimOf(app);
});

afterAll(async () => {
  await app?.close();
  await Promise.all([...Object.values(upstreams).map((upstream) => upstream.close()), trap?.close(), redirector?.close()]);
  await as?.close();
});

/** Nothing reached the trap: no metadata read, no token request, no subject token. */
function expectTrapUntouched(): void {
  expect(trap.requests.map((request) => `${request.method} ${request.path}`)).toEqual([]);
}

describe('a subject token goes only to a token endpoint the operator named', () => {
  it('the server refuses to start on a tokenExchange service that would discover its server: exit 78, naming the key and what to set', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tg-exchange-config-'));
    try {
      const file = join(dir, 'toolgate.yaml');
      await writeFile(file, [
        'auth: { apiKeys: [{ id: ci, sha256: "' + '0'.repeat(64) + '", tenant: acme, user: ci }] }',
        'mcp: { global: [{ id: exch, transport: streamable-http, url: "https://exch.example/mcp", auth: { type: tokenExchange, clientId: toolgate } }] }',
        'tenants: { acme: {} }',
      ].join('\n'));
      const run = promisify(execFile)(process.execPath, ['--import', 'tsx', join(packageRoot(), 'src/server.ts')], { env: { ...process.env, TOOLGATE_CONFIG: file, PORT: '0' }, timeout: 60_000 });
      const outcome = await run.then(() => ({ code: 0, stderr: '' }), (error: { code: number; stderr: string }) => error);
      expect(outcome.code).toBe(78);
      expect(outcome.stderr).toContain(`config ${file} /mcp/global/0/auth: the caller\'s token (tokenExchange) would go to whichever authorization server the service names; set "issuer" or "tokenUrl", or list the servers it may name in "trustedIssuers"`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000); // a process start under tsx, slow on a busy machine

  it('control: a service whose metadata names a trusted server exchanges the caller\'s token there', async () => {
    const grants = as.grants.length;
    const result = await call(app, alice, 'trusted_echo');
    expect(result.ok, result.output).toBe(true);
    expect(as.grants.slice(grants)).toEqual(['urn:ietf:params:oauth:grant-type:token-exchange']);
  });

  it('an upstream naming its own authorization server gets nothing: the call fails with the reason', async () => {
    const result = await call(app, alice, 'untrusted_echo');
    expect(result.error?.errorType).toBe('UPSTREAM_ERROR');
    expect(result.output).toContain('not in trustedIssuers');
    expectTrapUntouched();
  });

  it('without validation (no issuer, no trustedIssuers) the run time still refuses: alice\'s token never reaches the upstream\'s server', async () => {
    const result = await call(app, alice, 'bypassed_echo');
    expect(trap.requests.filter((request) => request.body.includes(alice)).map((request) => request.path)).toEqual([]);
    expectTrapUntouched();
    expect(result.error?.errorType).toBe('UPSTREAM_ERROR');
  });

  it('a trusted issuer is matched exactly: another issuer on the same origin is refused', async () => {
    const result = await call(app, alice, 'neighbour_echo');
    expect(result.output).toContain('not in trustedIssuers');
    expectTrapUntouched();
  });

  it('a trusted server whose metadata redirects elsewhere is not followed', async () => {
    const result = await call(app, alice, 'redirected_echo');
    expect(result.error?.errorType).toBe('UPSTREAM_ERROR');
    expect(redirector.requests.length).toBeGreaterThan(0);
    expectTrapUntouched();
  });

  it('called again and again, the hostile upstreams get nothing, each call is refused (UPSTREAM_ERROR), and another tenant is served meanwhile', async () => {
    const hostile = ['untrusted_echo', 'bypassed_echo', 'neighbour_echo', 'redirected_echo'];
    let calls = 0;
    // Rounds of the four hostile services until the victim tenant was sampled during them: at most 1000, and none
    // started after 20 s (repeatUntil). A bound of 50 ran out after 3 victim rounds in a run of the attack tests alone.
    await expectVictimServedDuring(app, victim, (rounds) =>
      repeatUntil(rounds, async () => {
        for (const name of hostile) {
          const result = await call(app, alice, name);
          expect(result.error?.errorType, name).toBe('UPSTREAM_ERROR');
          calls += 1;
        }
      }, { maxRepeats: 1000 }),
    );
    expect(calls).toBeGreaterThanOrEqual(hostile.length);
    expect(trap.requests.filter((request) => request.body.includes(alice) || request.authorization.includes(alice))).toEqual([]);
    expectTrapUntouched();
  });

  it('an operator-named issuer or token endpoint that redirects (307 keeps the body) is not followed', async () => {
    for (const name of ['issuerRedirect_echo', 'tokenRedirect_echo']) {
      const result = await call(app, alice, name);
      expect(result.error?.errorType, name).toBe('UPSTREAM_ERROR');
    }
    // The operator's token endpoint was asked (with the token: it is the operator's); the redirect's target never.
    expect(redirector.requests.some((request) => request.method === 'POST' && request.path === '/token')).toBe(true);
    expectTrapUntouched();
    // The upstreams whose auth names the server were never asked for their metadata.
    for (const id of ['tokenRedirect', 'issuerRedirect']) expect(upstreams[id]?.requests.some((request) => request.path.startsWith('/.well-known/'))).toBe(false);
  });
});

describe("a user's connection goes back only to the server that issued it", () => {
  it('an upstream that names another authorization server after alice connected never receives her refresh token', async () => {
    as.expiresIn = 1; // every access token is due for refresh at once
    const connected = await connect(app, alice, 'flip', 'alice');
    expect(connected.statusCode, connected.body).toBe(200);
    // A failed refresh makes toolgate discover again; by then the upstream names the trap.
    as.mode = 'error500';
    expect((await call(app, alice, 'flip_echo')).error?.errorType).toBe('UPSTREAM_ERROR');
    as.mode = 'normal';
    flipTo = () => trap.url;
    const result = await call(app, alice, 'flip_echo');
    const leaked = trap.requests.filter((request) => as.issued.some((token) => request.body.includes(token) || request.authorization.includes(token)));
    expect(leaked.map((request) => `${request.method} ${request.path}`)).toEqual([]);
    expect(trap.requests.filter((request) => request.path === '/token')).toEqual([]);
    // The connection is forgotten: alice connects again, at whatever server she then sees.
    expect(result.error?.errorType).toBe('CONNECTION_REQUIRED');
    expect(result.output).toContain('names another authorization server');
  });
});
