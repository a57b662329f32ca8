import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/demo.js';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';
import { launchChromium } from '../helpers/chromium.js';

// The console's Usage page in real headless Chromium (Debian's package) against a listening gateway: a bar
// per budget, and for a tenant admin each budget's top users and tools. Never downloads a browser.
const CHROMIUM = process.env.TOOLGATE_TEST_CHROMIUM ?? '/usr/bin/chromium';
const CONSOLE_ROOT = join(packageRoot(), 'dist', 'console');
const SHOTS = process.env.TOOLGATE_TEST_SHOTS ?? join(packageRoot(), 'test-artifacts', 'console');
const skipReason = !existsSync(CHROMIUM) ? `no Chromium at ${CHROMIUM}` : !existsSync(join(CONSOLE_ROOT, 'index.html')) ? 'the console is not built (npm run build)' : undefined;
if (skipReason) console.warn(`[toolgate tests] console usage test SKIPPED: ${skipReason}`);

let app: FastifyInstance;
let base: string;
let browser: Browser | undefined;
let context: BrowserContext | undefined;
let profile: string;
let admin: string;

beforeAll(async () => {
  if (skipReason) return;
  mkdirSync(SHOTS, { recursive: true });
  const budgets = [
    { id: 'daily-calls', scope: 'user', period: 'day', calls: 5, warnAt: 0.6 },
    { id: 'search-spend', scope: 'tenant', period: 'month', tools: ['get_weather'], cost: 40, timeZone: 'Europe/Berlin' },
  ];
  app = await buildTestApp(testConfig({ console: { enabled: true }, tenants: { acme: { budgets, toolCosts: { get_weather: 4 } } } }), { consoleRoot: CONSOLE_ROOT });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  admin = await signToken({ sub: 'carol', roles: ['admin'] });
  const alice = await signToken({ sub: 'alice' });
  for (const [token, calls] of [[alice, 4], [admin, 2]] as const) {
    for (let i = 0; i < calls; i += 1) await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name: 'get_weather', arguments: { city: 'Oslo' } } });
  }
  ({ context, profile } = await launchChromium(CHROMIUM, { width: 1280, height: 900 }));
  browser = context.browser() ?? undefined;
}, 60_000);
afterAll(async () => {
  await context?.close();
  await browser?.close();
  await app?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

describe.skipIf(skipReason !== undefined)('the console Usage page', () => {
  it("shows the admin's budgets as bars and each budget's top users and tools", async () => {
    const page = await context!.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${base}/console/`);
    await page.getByLabel(/token|API key/i).fill(admin);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Approvals' }).waitFor();
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
