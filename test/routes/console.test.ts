import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP } from '../../routes/console.js';
import { demoConfig } from '../../src/config/demo.js';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';
import { governedConfig } from '../helpers/governed.js';

let root: string;
let app: FastifyInstance;
let off: FastifyInstance;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'tg-console-'));
  mkdirSync(join(root, 'assets'));
  writeFileSync(join(root, 'index.html'), '<!doctype html><title>toolgate console</title><script type="module" src="/console/assets/app-1.js"></script>');
  writeFileSync(join(root, 'assets', 'app-1.js'), 'console.log(1)');
  writeFileSync(join(root, 'assets', 'app-1.css'), 'body{}');
  writeFileSync(join(root, 'secret.env'), 'TOKEN=1');
  writeFileSync(join(tmpdir(), 'tg-console-outside.js'), 'outside');
  symlinkSync(join(tmpdir(), 'tg-console-outside.js'), join(root, 'assets', 'link.js'));
  app = await buildTestApp(governedConfig({ console: { enabled: true } }), { consoleRoot: root });
  off = await buildTestApp(testConfig(), { consoleRoot: root });
});
afterAll(async () => {
  await Promise.all([app.close(), off.close()]);
  rmSync(root, { recursive: true, force: true });
});

describe('console static files', () => {
  it('serves every page and asset with the strict CSP, nosniff and no framing', async () => {
    for (const url of ['/console/', '/console/index.html', '/console/assets/app-1.js', '/console/assets/app-1.css', '/console/nope', '/console']) {
      const answer = await app.inject({ url });
      expect(answer.headers['content-security-policy'], url).toBe(CONSOLE_CSP);
      expect(answer.headers['x-content-type-options'], url).toBe('nosniff');
      expect(answer.headers['x-frame-options'], url).toBe('DENY');
    }
    expect(CONSOLE_CSP).toContain("default-src 'self'");
    expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
    expect(CONSOLE_CSP).not.toContain('unsafe-inline');
    const page = await app.inject({ url: '/console/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-cache');
    const script = await app.inject({ url: '/console/assets/app-1.js' });
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toContain('immutable');
    expect((await app.inject({ url: '/console' })).statusCode).toBe(308);
  });

  it('serves only the built files: no traversal, no other file types, no links out', async () => {
    for (const url of ['/console/../package.json', '/console/%2e%2e/package.json', '/console/assets/..%2f..%2fpackage.json', '/console/secret.env', '/console/assets/link.js', '/console//etc/passwd', '/console/assets/app-1.js%00.html']) {
      const answer = await app.inject({ url });
      expect(answer.statusCode, url).toBe(404);
      expect(answer.body, url).not.toContain('TOKEN=1');
      expect(answer.body, url).not.toContain('"name": "toolgate"');
    }
  });

  it('answers 404 when console.enabled is off', async () => {
    expect(testConfig().console.enabled).toBe(false);
    expect((await off.inject({ url: '/console/' })).statusCode).toBe(404);
    expect((await off.inject({ url: '/console/assets/app-1.js' })).statusCode).toBe(404);
  });
});

describe('approvals listing for the console inbox', () => {
  it('lists decided approvals with their result and answers 304 to an unchanged ETag', async () => {
    const alice = await signToken({ sub: 'alice' });
    const bob = await signToken({ sub: 'bob', roles: ['approver'] });
    const first = await app.inject({ url: '/v1/approvals', headers: bearer(bob) });
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
    expect((await app.inject({ url: '/v1/approvals', headers: { ...bearer(bob), 'if-none-match': etag } })).statusCode).toBe(304);

    const { approvalId } = (await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(alice), payload: { name: 'create_ticket', arguments: { title: 'console' } } })).json();
    const changed = await app.inject({ url: '/v1/approvals', headers: { ...bearer(bob), 'if-none-match': etag } });
    expect(changed.statusCode).toBe(200);
    expect(changed.json().approvals.map((a: { id: string }) => a.id)).toContain(approvalId);

    await app.inject({ method: 'POST', url: `/v1/approvals/${approvalId}/deny`, headers: bearer(bob), payload: { reason: 'not today' } });
    const decided = (await app.inject({ url: '/v1/approvals?status=decided', headers: bearer(bob) })).json().approvals;
    expect(decided[0]).toMatchObject({ id: approvalId, status: 'denied', result: { ok: false, error: { errorType: 'APPROVAL_DENIED' } } });
    expect((await app.inject({ url: '/v1/approvals?status=decided', headers: bearer(alice) })).json().approvals.map((a: { id: string }) => a.id)).toEqual([approvalId]);
    const stranger = await signToken({ sub: 'mallory' });
    expect((await app.inject({ url: '/v1/approvals?status=all', headers: bearer(stranger) })).json().approvals).toEqual([]);
    const foreign = await signToken({ sub: 'erin', tenant: 'globex', roles: ['approver'] });
    expect((await app.inject({ url: '/v1/approvals?status=all', headers: bearer(foreign) })).json().approvals).toEqual([]);
    expect((await app.inject({ url: '/v1/approvals?status=everything', headers: bearer(bob) })).statusCode).toBe(400);
  });
});

describe('the demo', () => {
  it('turns the console on and lets the printed approver key decide a send_announcement call of the demo key', async () => {
    const demo = demoConfig({ TOOLGATE_DEV_API_KEY: 'demo-key-for-console-test', LOG_LEVEL: 'silent' });
    expect(demo.config.console.enabled).toBe(true);
    expect(demo.approverKeyGenerated).toBe(true);
    const app = await buildTestApp({ ...demo.config, metrics: { ...demo.config.metrics, enabled: false } }, { consoleRoot: root });
    try {
      expect((await app.inject({ url: '/console/' })).statusCode).toBe(200);
      const pending = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(demo.apiKey), payload: { name: 'send_announcement', arguments: { title: 'Hello' } } });
      expect(pending.statusCode).toBe(202);
      const approved = await app.inject({ method: 'POST', url: `/v1/approvals/${pending.json().approvalId}/approve`, headers: bearer(demo.approverKey) });
      expect(approved.json()).toMatchObject({ status: 'approved', decidedBy: 'demo-approver', result: { ok: true } });
      expect(JSON.parse(approved.json().result.output)).toEqual({ posted: true, title: 'Hello', urgent: false, by: 'demo-user' });
    } finally {
      await app.close();
    }
  });
});
