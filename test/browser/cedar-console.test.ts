import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/demo.js';
import { buildTestApp, signToken, testConfig } from '../helpers/build.js';
import { consoleBrowser, signedInConsole, type ConsoleBrowser } from '../helpers/chromium.js';

// The Tools page explains the tenant's Cedar listing for a chosen principal (tenant admins, read-only), in
// real headless Chromium against a listening gateway. Never downloads a browser.
const CHROMIUM = process.env.TOOLGATE_TEST_CHROMIUM ?? '/usr/bin/chromium';
const CONSOLE_ROOT = join(packageRoot(), 'dist', 'console');
const SHOTS = process.env.TOOLGATE_TEST_SHOTS ?? join(packageRoot(), 'test-artifacts', 'console');
const skipReason = !existsSync(CHROMIUM) ? `no Chromium at ${CHROMIUM}` : !existsSync(join(CONSOLE_ROOT, 'index.html')) ? 'the console is not built (npm run build)' : undefined;
if (skipReason) console.warn(`[toolgate tests] Cedar console test SKIPPED: ${skipReason}`);

const POLICIES = `
@id("everyone") permit(principal, action, resource);
@id("eu-exports") forbid(principal, action, resource is Tool) when { resource.name like "export_*" }
  unless { principal.claims has region && principal.claims.region == "eu" };
`;

let app: FastifyInstance;
let browser: ConsoleBrowser | undefined;

beforeAll(async () => {
  if (skipReason) return;
  mkdirSync(SHOTS, { recursive: true });
  app = await buildTestApp(
    testConfig({
      console: { enabled: true },
      functions: [{ module: './test/fixtures/functions/basic.mjs' }, { module: './test/fixtures/functions/cedar.mjs' }],
      tenants: { acme: { cedar: { policies: POLICIES, claims: { region: 'String' } } }, globex: {} },
    }),
  );
  browser = await consoleBrowser(app, CHROMIUM);
}, 120_000);

afterAll(async () => {
  await (browser?.close() ?? app?.close());
});

describe.skipIf(skipReason !== undefined)('Cedar on the console Tools page', () => {
  it('shows which policy holds a tool back for a chosen principal', { timeout: 120_000 }, async () => {
    const admin = await signToken({ sub: 'ada', roles: ['admin'] }, { expiresIn: '10m' });
    const page = await signedInConsole(browser!, admin, { width: 1280, height: 800 });
    await page.getByRole('navigation').getByRole('link', { name: 'Tools', exact: true }).click();
    await page.getByRole('heading', { level: 2, name: 'Cedar policies for a principal' }).waitFor();
    await page.getByLabel('User', { exact: true }).fill('zed');
    await page.getByLabel('Claims (JSON)').fill('{"region":"us"}');
    await page.getByRole('button', { name: 'Explain' }).click();
    const table = page.getByRole('table', { name: /Listing decision per tool/ });
    const row = table.getByRole('row', { name: /export_report/ });
    await row.waitFor();
    expect(await row.textContent()).toMatch(/export_report\s*no\s*eu-exports/);
    expect(await table.getByRole('row', { name: /get_weather/ }).textContent()).toMatch(/get_weather\s*yes\s*everyone/);
    await page.getByRole('heading', { level: 2, name: 'Cedar policies for a principal' }).scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'tools-cedar.png'), fullPage: true });
    await page.close();
  });
});
