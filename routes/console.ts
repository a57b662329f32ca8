import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import fp from 'fastify-plugin';
import { packageRoot } from '../src/config/demo.js';
import { errors } from '../src/errors.js';
import type { RoutePlugin } from '../src/schemas/type-provider.js';

/** Every console response (pages, assets, its 404s): no inline script, no framing, no sniffing. */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};
const MAX_FILES = 500;
const MAX_FILE_BYTES = 5 * 1024 * 1024;

interface Asset {
  body: Buffer;
  type: string;
  /** Vite's hashed file names never change content: cached for a year; index.html is always revalidated. */
  immutable: boolean;
}

/**
 * The built console, read once at start-up into a map of its files (URL path → content). Only names in
 * the map are served, so no request path ever reaches the file system (no traversal, no symlink surprises).
 */
export function loadConsoleAssets(root: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) {
        const type = TYPES[extname(entry.name)];
        if (!type || statSync(path).size > MAX_FILE_BYTES || assets.size >= MAX_FILES) continue;
        const name = relative(root, path).split(sep).join('/');
        assets.set(name, { body: readFileSync(path), type, immutable: name.startsWith('assets/') });
      }
    }
  };
  try {
    walk(root);
  } catch {
    return new Map();
  }
  return assets;
}

/** The operator console at /console/ (`console.enabled`); when off, the routes do not exist (404). */
const routes: RoutePlugin<{ root?: string }> = async (app, options) => {
  const assets = loadConsoleAssets(options.root ?? join(packageRoot(), 'dist', 'console'));
  if (!assets.has('index.html')) app.log.warn('console.enabled is on but the console is not built (npm run build); /console/ answers 404');

  app.addHook('onSend', async (_request, reply) => {
    reply.header('content-security-policy', CONSOLE_CSP);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('cross-origin-opener-policy', 'same-origin');
  });

  app.get('/console', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/console/', 308));
  app.get<{ Params: { '*': string } }>('/console/*', { schema: { hide: true } }, async (request, reply) => {
    const name = request.params['*'] === '' ? 'index.html' : request.params['*'];
    const asset = assets.get(name);
    if (!asset) throw new errors.TG_NOT_FOUND(assets.has('index.html') ? 'no such console file' : 'the console is not built (npm run build)');
    reply.header('cache-control', asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    return reply.type(asset.type).send(asset.body);
  });
};

export const consoleRoutes = fp(routes, { name: 'toolgate-routes-console', dependencies: ['toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
