import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/demo.js';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';
import { consoleBrowser, signedInConsole, type ConsoleBrowser } from '../helpers/chromium.js';

// The console's Usage page in real headless Chromium (Debian's package) against a listening gateway: a bar
// per budget, and for a tenant admin each budget's top users and tools. Never downloads a browser.
const CHROMIUM = process.env.TOOLGATE_TEST_CHROMIUM ?? '/usr/bin/chromium';
const CONSOLE_ROOT = join(packageRoot(), 'dist', 'console');
const SHOTS = process.env.TOOLGATE_TEST_SHOTS ?? join(packageRoot(), 'test-artifacts', 'console');
const skipReason = !existsSync(CHROMIUM) ? `no Chromium at ${CHROMIUM}` : !existsSync(join(CONSOLE_ROOT, 'index.html')) ? 'the console is not built (npm run build)' : undefined;
if (skipReason) console.warn(`[toolgate tests] console usage test SKIPPED: ${skipReason}`);

let app: FastifyInstance;
let browser: ConsoleBrowser | undefined;
let admin: string;

beforeAll(async () => {
  if (skipReason) return;
  mkdirSync(SHOTS, { recursive: true });
  const budgets = [
    { id: 'daily-calls', scope: 'user', period: 'day', calls: 5, warnAt: 0.6 },
    { id: 'search-spend', scope: 'tenant', period: 'month', tools: ['get_weather'], cost: 40, timeZone: 'Europe/Berlin' },
  ];
  app = await buildTestApp(testConfig({ console: { enabled: true }, tenants: { acme: { budgets, toolCosts: { get_weather: 4 } } } }), { consoleRoot: CONSOLE_ROOT });
  admin = await signToken({ sub: 'carol', roles: ['admin'] });
  const alice = await signToken({ sub: 'alice' });
  for (const [token, calls] of [[alice, 4], [admin, 2]] as const) {
    for (let i = 0; i < calls; i += 1) await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name: 'get_weather', arguments: { city: 'Oslo' } } });
  }
  browser = await consoleBrowser(app, CHROMIUM, { width: 1280, height: 900 });
}, 60_000);
afterAll(async () => {
  await (browser?.close() ?? app?.close());
});

describe.skipIf(skipReason !== undefined)('the console Usage page', () => {
  it("shows the admin's budgets as bars and each budget's top users and tools", async () => {
    const page = await signedInConsole(browser!, admin, { width: 1280, height: 900 });
    await page.getByRole('navigation').getByRole('link', { name: 'Usage', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Usage', exact: true }).waitFor();
    const spend = page.getByRole('meter', { name: 'search-spend' }).first();
    await spend.waitFor();
    await expect(spend.getAttribute('aria-valuenow')).resolves.toBe('24');
    await expect(page.getByRole('meter', { name: 'daily-calls' }).first().getAttribute('aria-valuenow')).resolves.toBe('2');
    const topUsers = page.getByRole('table', { name: 'Top users of search-spend' });
    await topUsers.waitFor();
    await expect(topUsers.innerText()).resolves.toMatch(/alice\s+16[\s\S]*carol\s+8/);
    await page.screenshot({ path: join(SHOTS, 'usage.png'), fullPage: true });
    await page.close();
  }, 30_000);
});
