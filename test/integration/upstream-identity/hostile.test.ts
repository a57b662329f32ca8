// Hostile cases of upstream identity (docs/security-model.md#upstream-identity): forged and replayed flows,
// code injection, open redirects, connecting for someone else, reading tokens back, tokens leaking into
// any output, crossed tokens under concurrency, a dead store and a slow, failing or hostile token endpoint.
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../../src/store/memory.js';
import type { StateStore } from '../../../src/store/types.js';
import { storeUnavailable } from '../../../src/store/unavailable.js';
import { API_KEY, bearer, buildTestApp, scrapeMetrics, signToken } from '../../helpers/build.js';
import { authorize, call, connect, PUBLIC_URL, seen, startStage, type Stage } from './setup.js';

let stage: Stage;
let app: FastifyInstance;
let store: StateStore & { down: boolean };
let alice: string;
let bob: string;
let auditPath: string;
const logLines: string[] = [];
const responses: string[] = [];

/** A memory store that can be switched off (every operation throws the store's own unavailable error). */
function switchableStore(): StateStore & { down: boolean } {
  const inner = createMemoryStore();
  const wrapped = { down: false } as StateStore & { down: boolean };
  for (const key of Object.keys(inner) as Array<keyof StateStore>) {
    const value = inner[key];
    if (typeof value !== 'function') continue;
    Object.defineProperty(wrapped, key, {
      value: (...args: unknown[]) => {
        if (wrapped.down && key !== 'close') return Promise.reject(storeUnavailable(String(key), new Error('connection refused')));
        return (value as (...inner: unknown[]) => unknown).apply(inner, args);
      },
    });
  }
  Object.defineProperty(wrapped, 'kind', { value: inner.kind });
  return wrapped;
}

async function inject(options: InjectOptions | string): Promise<{ statusCode: number; body: string; headers: Record<string, unknown> }> {
  const res = await app.inject(options);
  responses.push(res.body, JSON.stringify(res.headers));
  return res;
}

async function startFlow(token: string, service = 'jira'): Promise<string> {
  const res = await inject({ method: 'POST', url: `/v1/connections/${service}`, headers: bearer(token) });
  expect(res.statusCode).toBe(200);
  return (JSON.parse(res.body) as { authorizationUrl: string }).authorizationUrl;
}

beforeAll(async () => {
  stage = await startStage();
  store = switchableStore();
  auditPath = join(await mkdtemp(join(tmpdir(), 'tg-identity-audit-')), 'audit.log');
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString('utf8'));
      done();
    },
  });
  app = await buildTestApp(stage.config({ audit: { sink: 'file', path: auditPath } }), { store, logger: { level: 'trace', stream } });
  alice = await signToken({ sub: 'alice' });
  bob = await signToken({ sub: 'bob' });
});

afterAll(async () => {
  await app?.close();
  await stage?.close();
});

describe('the connect flow refuses', () => {
  it('a forged state, and a replayed one', async () => {
    expect((await inject({ url: '/oauth/callback?state=forged-state-value&code=abc' })).statusCode).toBe(400);
    const callback = await authorize(await startFlow(alice), 'alice');
    expect((await inject({ url: callback })).statusCode).toBe(200);
    const replay = await inject({ url: callback });
    expect(replay.statusCode).toBe(400);
    expect(replay.body).toMatch(/already used/);
  });

  it('a code replayed under a fresh state of the same user', async () => {
    const first = await authorize(await startFlow(bob), 'bob');
    expect((await inject({ url: first })).statusCode).toBe(200);
    const usedCode = new URL(first, PUBLIC_URL).searchParams.get('code') ?? '';
    const fresh = new URL(await authorize(await startFlow(bob), 'bob'), PUBLIC_URL);
    const replayed = await inject({ url: `/oauth/callback?state=${fresh.searchParams.get('state') ?? ''}&code=${usedCode}` });
    expect(replayed.statusCode).toBe(502);
  });

  it('a callback that completes another user\'s flow with one\'s own code (code injection): PKCE binds the code to its flow', async () => {
    const carol = await signToken({ sub: 'carol' });
    const dave = await signToken({ sub: 'dave' });
    const carolFlow = new URL(await authorize(await startFlow(carol), 'carol'), PUBLIC_URL);
    const daveFlow = new URL(await authorize(await startFlow(dave), 'dave'), PUBLIC_URL);
    // dave's code under carol's state: carol's verifier does not match dave's challenge.
    const injected = await inject({ url: `/oauth/callback?state=${carolFlow.searchParams.get('state') ?? ''}&code=${daveFlow.searchParams.get('code') ?? ''}` });
    expect(injected.statusCode).toBe(502);
    expect((await call(app, carol, 'jira_whoami')).error?.errorType).toBe('CONNECTION_REQUIRED');
    expect((await call(app, dave, 'jira_whoami')).error?.errorType).toBe('CONNECTION_REQUIRED');
  });

  it('an open redirect: the redirect URI is always the configured one, and the callback never redirects anywhere a request names', async () => {
    const url = new URL(await startFlow(alice, 'wiki'));
    expect(url.searchParams.get('redirect_uri')).toBe(`${PUBLIC_URL}/oauth/callback`);
    const viaHost = await inject({ method: 'POST', url: '/v1/connections/wiki?returnTo=https://evil.test&redirect_uri=https://evil.test/cb', headers: { ...bearer(alice), host: 'evil.test', 'x-forwarded-host': 'evil.test' } });
    expect(new URL((JSON.parse(viaHost.body) as { authorizationUrl: string }).authorizationUrl).searchParams.get('redirect_uri')).toBe(`${PUBLIC_URL}/oauth/callback`);
    const callback = await authorize(await startFlow(alice, 'wiki'), 'alice');
    const done = await inject({ url: `${callback}&returnTo=https://evil.test&redirect_uri=https://evil.test/cb` });
    expect(done.statusCode).toBe(200);
    expect(done.headers.location).toBeUndefined();
    expect(done.body).not.toContain('evil.test');
  });

  it('a call needing the connection does not end the flow the user is completing; beyond 3 open flows the oldest ends', async () => {
    const heidi = await signToken({ sub: 'heidi' });
    const inBrowser = await authorize(await startFlow(heidi), 'heidi');
    expect((await call(app, heidi, 'jira_whoami')).error?.errorType).toBe('CONNECTION_REQUIRED');
    expect((await inject({ url: inBrowser })).statusCode).toBe(200);
    const ivan = await signToken({ sub: 'ivan' });
    const oldest = await authorize(await startFlow(ivan), 'ivan');
    for (let flow = 0; flow < 3; flow += 1) await startFlow(ivan);
    expect((await inject({ url: oldest })).statusCode).toBe(400);
  });

  it('connecting on behalf of another user: the flow belongs to the caller, whatever the request says', async () => {
    const erin = await signToken({ sub: 'erin' });
    const started = await inject({ method: 'POST', url: '/v1/connections/jira?user=frank', headers: { ...bearer(erin), 'content-type': 'application/json' }, payload: { user: 'frank', tenant: 'globex' } });
    const callback = await authorize((JSON.parse(started.body) as { authorizationUrl: string }).authorizationUrl, 'erin');
    expect((await inject({ url: callback })).statusCode).toBe(200);
    expect(seen(await call(app, erin, 'jira_whoami')).sub).toBe('erin');
    const frank = await signToken({ sub: 'frank' });
    expect((await call(app, frank, 'jira_whoami')).error?.errorType).toBe('CONNECTION_REQUIRED');
    // A tenant that does not reach the service cannot start a flow for it.
    const globex = await signToken({ sub: 'erin', tenant: 'globex' });
    expect((await inject({ method: 'POST', url: '/v1/connections/jira', headers: bearer(globex) })).statusCode).toBe(404);
  });
});

describe('tokens stay inside toolgate', () => {
  it('50 interleaved calls of two users never carry each other\'s token', async () => {
    const calls = Array.from({ length: 50 }, (_, index) => (index % 2 === 0 ? { token: alice, user: 'alice' } : { token: bob, user: 'bob' }));
    const results = await Promise.all(calls.map(({ token }) => call(app, token, 'jira_whoami')));
    results.forEach((result, index) => expect(seen(result).sub).toBe(calls[index]?.user));
  });

  it('an admin reads who is connected, never a token', async () => {
    const admin = await inject({ url: '/v1/admin/connections', headers: bearer(API_KEY) });
    expect(admin.statusCode).toBe(200);
    expect(admin.body).not.toMatch(/eyJ|token/i);
  });

  it('fails closed with a clear error while the store is down, and the upstream is not called', async () => {
    const before = stage.jira.authorizations.length;
    store.down = true;
    try {
      const result = await call(app, alice, 'jira_whoami');
      expect(result.error?.errorType).toBe('UPSTREAM_ERROR');
      expect(result.error?.error).toMatch(/credential store is unavailable/);
      expect((await inject({ url: '/v1/connections', headers: bearer(alice) })).statusCode).toBe(503);
    } finally {
      store.down = false;
    }
    expect(stage.jira.authorizations.length).toBe(before);
  });
});

describe('a slow, failing or hostile token endpoint', () => {
  // Each case on a replica of its own: breakers are per process, and one case's failures must not open the next one's.
  let replica: FastifyInstance | undefined;
  beforeEach(async () => {
    replica = await buildTestApp(stage.config());
  });
  afterEach(async () => {
    stage.as.mode = 'normal';
    await replica?.close();
  });
  const exchangeAs = async (user: string) => call(replica as FastifyInstance, await signToken({ sub: user }), 'exch_whoami');

  it('a slow one costs a call a bounded wait', async () => {
    stage.as.mode = 'slow';
    try {
      const started = Date.now();
      const asked = stage.as.grants.length;
      const result = await exchangeAs('slow-1');
      expect(result.error?.errorType).toBe('UPSTREAM_ERROR');
      expect(result.error?.error).toMatch(/did not answer within 1000 ms/);
      // The retry policy tries a read-only call 3 times; each wait is cut at the auth timeout (1 s), not the
      // server's 3 s (unbounded, the call would take 9 s).
      const attempts = stage.as.grants.length - asked;
      expect(attempts).toBeLessThanOrEqual(3);
      expect(Date.now() - started).toBeLessThan(attempts * 3000);
    } finally {
      stage.as.mode = 'normal';
    }
  });

  it('huge and malformed answers are refused, not parsed', async () => {
    stage.as.mode = 'huge';
    try {
      const huge = await exchangeAs('huge-1');
      expect(huge.error?.errorType).toBe('UPSTREAM_ERROR');
      expect(huge.error?.error).toMatch(/exceeds 65536 bytes/);
      stage.as.mode = 'malformed';
      const malformed = await exchangeAs('malformed-1');
      expect(malformed.error?.errorType).toBe('UPSTREAM_ERROR');
      expect(malformed.error?.error).toMatch(/unusable answer/);
    } finally {
      stage.as.mode = 'normal';
    }
  });

  it('a failing one opens its breaker: later calls fail fast without asking it', async () => {
    stage.as.mode = 'error500';
    try {
      for (let attempt = 0; attempt < 5; attempt += 1) expect((await exchangeAs(`down-${attempt}`)).error?.errorType).toBe('UPSTREAM_ERROR');
      const asked = stage.as.grants.length;
      const fast = await exchangeAs('down-after');
      expect(fast.error?.error).toMatch(/authorization server is failing/);
      expect(stage.as.grants.length).toBe(asked);
    } finally {
      stage.as.mode = 'normal';
    }
  });
});

describe('nothing anywhere holds a token', () => {
  it('no log line, audit event, metric, response or error carries an access, refresh or inbound token', async () => {
    // Make sure the audit saw the credential kinds.
    expect(seen(await call(app, alice, 'robot_whoami')).sub).toBe('toolgate');
    const metrics = await scrapeMetrics(app);
    await app.close();
    const audit = await readFile(auditPath, 'utf8');
    const outputs = [...logLines, audit, metrics, ...responses].join('\n');
    const secrets = [...stage.as.issued, alice, bob];
    expect(stage.as.issued.length).toBeGreaterThan(10);
    for (const secret of secrets) expect(outputs.includes(secret), `a token appears in the captured output`).toBe(false);
    // Nor the callback's code and state (single-use secrets of a flow).
    expect(logLines.join('\n')).not.toMatch(/oauth\/callback\?(?!\[redacted\])/);
    // The audit names the kind and a hash prefix.
    const events = audit.trim().split('\n').map((line) => JSON.parse(line) as { tool: string; credential?: { kind: string; tokenHash: string } });
    expect(events.find((event) => event.tool === 'robot_whoami' && event.credential)?.credential).toEqual({ kind: 'service', tokenHash: expect.stringMatching(/^[0-9a-f]{12}$/) });
    expect(events.some((event) => event.tool === 'jira_whoami' && event.credential?.kind === 'user')).toBe(true);
    // Token requests are counted by service and kind, never by user.
    expect(metrics).toMatch(/toolgate_upstream_token_fetches_total\{service="jira",kind="user"\} \d+/);
    expect(metrics).toMatch(/toolgate_upstream_token_failures_total\{service="jira",kind="user"\} \d+/);
    expect(metrics).not.toMatch(/toolgate_upstream_token_\w+\{[^}]*user=/);
  });
});
