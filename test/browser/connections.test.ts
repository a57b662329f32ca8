// The connect flow of upstream identity driven end to end in headless Chromium through the console: the
// Connections page's Connect opens the authorization server, which sends the browser back to toolgate's
// callback; the page then shows the connection, and the user's calls run as them at the upstream.
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/demo.js';
import { bearer, buildTestApp, OPERATOR_KEY, signToken } from '../helpers/build.js';
import { launchChromium } from '../helpers/chromium.js';
import { call, seen, startStage, type Stage } from '../integration/upstream-identity/setup.js';

const CHROMIUM = process.env.TOOLGATE_TEST_CHROMIUM ?? '/usr/bin/chromium';
const CONSOLE_ROOT = join(packageRoot(), 'dist', 'console');
const skipReason = !existsSync(CHROMIUM) ? `no Chromium at ${CHROMIUM}` : !existsSync(join(CONSOLE_ROOT, 'index.html')) ? 'the console is not built (npm run build)' : undefined;
if (skipReason) console.warn(`[toolgate tests] connections browser test SKIPPED: ${skipReason}`);

let stage: Stage;
let app: FastifyInstance;
let base: string;
let context: BrowserContext | undefined;
let profile: string;

beforeAll(async () => {
  if (skipReason) return;
  stage = await startStage();
  // The redirect URI must be this listener's, known only once it listens: start on a placeholder, then reload.
  let publicUrl = 'http://127.0.0.1:1';
  const configNow = () => stage.config({ console: { enabled: true }, server: { publicUrl } });
  app = await buildTestApp(configNow(), { loadConfig: async () => configNow() });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
  publicUrl = base;
  const reloaded = await app.inject({ method: 'POST', url: '/v1/admin/reload', headers: bearer(OPERATOR_KEY) });
  if (reloaded.statusCode !== 200) throw new Error(`reload answered ${reloaded.statusCode}: ${reloaded.body}`);
  ({ context, profile } = await launchChromium(CHROMIUM));
});

afterAll(async () => {
  await context?.close();
  await app?.close();
  await stage?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

describe.skipIf(skipReason !== undefined)('connecting an upstream account in the console', () => {
  it('Connect → the authorization server → the callback; the page then shows it connected and calls run as the user', async () => {
    const alice = await signToken({ sub: 'alice' }, { expiresIn: '10m' });
    stage.as.loginAs = 'alice';
    expect((await call(app, alice, 'jira_whoami')).error?.errorType).toBe('CONNECTION_REQUIRED');
    const page = await context!.newPage();
    await page.goto(`${base}/console/`);
    await page.getByLabel(/token|API key/i).fill(alice);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation').getByRole('link', { name: 'Connections', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Connections', exact: true }).waitFor();
    const row = page.getByRole('row').filter({ hasText: 'jira' });
    await row.getByText('not connected').waitFor();
    const [popup] = await Promise.all([context!.waitForEvent('page'), row.getByRole('button', { name: 'Connect jira' }).click()]);
    await popup.getByRole('heading', { name: 'Connected' }).waitFor();
    expect(popup.url().startsWith(`${base}/oauth/callback?`)).toBe(true);
    // The page is styled: its stylesheet passes the page's CSP by its hash (a refused one would leave 0px).
    expect(await popup.evaluate(() => getComputedStyle(document.querySelector('main')!).borderTopLeftRadius)).toBe('12px');
    if (process.env.TOOLGATE_TEST_SCREENSHOTS) await popup.screenshot({ path: join(process.env.TOOLGATE_TEST_SCREENSHOTS, 'oauth-callback.png') });
    await popup.close();
    await page.getByRole('button', { name: 'Refresh' }).click();
    await row.getByText('connected', { exact: true }).waitFor();
    expect(seen(await call(app, alice, 'jira_whoami')).sub).toBe('alice');
    await row.getByRole('button', { name: 'Disconnect jira' }).click();
    await row.getByText('not connected').waitFor();
    expect((await call(app, alice, 'jira_whoami')).error?.errorType).toBe('CONNECTION_REQUIRED');
    await page.close();
  });
});
