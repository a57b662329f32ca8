import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { BrowserContext, Page } from 'playwright-core';
import { chromium } from 'playwright-core';

/** Headless Chromium (Debian's package, never downloaded) in a fresh profile folder; the caller removes `profile`. */
export async function launchChromium(executablePath: string, viewport = { width: 1280, height: 800 }): Promise<{ context: BrowserContext; profile: string }> {
  const profile = mkdtempSync(join(tmpdir(), 'tg-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport,
  });
  return { context, profile };
}

export interface ConsoleBrowser {
  /** The app's origin, e.g. http://127.0.0.1:41234. */
  base: string;
  context: BrowserContext;
  /** Closes the browser and the app, and removes the browser's profile folder. */
  close(): Promise<void>;
}

/** `app` listening on a free loopback port, and a headless Chromium to open its console with. */
export async function consoleBrowser(app: FastifyInstance, executablePath: string, viewport?: { width: number; height: number }): Promise<ConsoleBrowser> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const { context, profile } = await launchChromium(executablePath, viewport);
  return {
    base,
    context,
    async close() {
      await context.close();
      await context.browser()?.close();
      await app.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** A fresh tab (its own sessionStorage) of `viewport`'s size signed in to the console with `token`, showing the page it opens with (Approvals). */
export async function signedInConsole({ base, context }: Pick<ConsoleBrowser, 'base' | 'context'>, token: string, viewport: { width: number; height: number }, colorScheme: 'light' | 'dark' = 'light'): Promise<Page> {
  const page = await context.newPage();
  await page.setViewportSize(viewport);
  await page.emulateMedia({ colorScheme });
  page.on('pageerror', (error) => console.warn('[console page error]', error.message));
  await page.goto(`${base}/console/`);
  await page.getByLabel(/token|API key/i).fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Approvals' }).waitFor();
  return page;
}
