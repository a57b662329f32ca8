import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateConfigObject } from './load.js';
import type { GatewayConfig } from './types.js';

/** The package root (works from src/ under tsx/vitest and from dist/src/ after a build). */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('toolgate: package.json not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
}

export interface DemoConfig {
  config: GatewayConfig;
  apiKey: string;
  /** True when the key was generated (it is printed once at start-up). */
  generated: boolean;
}

/**
 * The embedded demo: one process, in-memory store, tenant `demo` with a few example function tools.
 * The API key comes from TOOLGATE_DEV_API_KEY or is generated; only its SHA-256 is kept in config.
 */
export function demoConfig(env: NodeJS.ProcessEnv = process.env): DemoConfig {
  const fromEnv = env.TOOLGATE_DEV_API_KEY;
  const apiKey = fromEnv && fromEnv.length > 0 ? fromEnv : `tg_demo_${randomBytes(24).toString('base64url')}`;
  const sha256 = createHash('sha256').update(apiKey).digest('hex');
  // A second demo tenant only when its key is chosen, so the RAG isolation demo takes two curl commands.
  const demo2Key = env.TOOLGATE_DEV_API_KEY_DEMO2;
  const demo2 = demo2Key && demo2Key.length > 0
    ? [{ id: 'demo2', sha256: createHash('sha256').update(demo2Key).digest('hex'), tenant: 'demo2', user: 'demo2-user', roles: [] }]
    : [];
  const raw = {
    server: { host: env.HOST ?? '0.0.0.0', port: env.PORT ? Number(env.PORT) : 8080 },
    auth: { apiKeys: [{ id: 'demo', sha256, tenant: 'demo', user: 'demo-user', roles: ['admin', 'approver'] }, ...demo2] },
    store: { kind: 'memory' },
    audit: { sink: 'off' },
    functions: [{ module: './examples/functions/demo-tools.mjs' }],
    // Two tenants share examples/kb.jsonl; the filter is bound from the caller's token, never from the model.
    rag: [
      {
        name: 'knowledge_search',
        description: 'Search the company handbook. Returns numbered passages [S1], [S2]… with their sources.',
        dataset: 'demo-handbook',
        backend: { kind: 'embedded', documents: './examples/kb.jsonl' },
        topK: { default: 5, max: 10 },
        filter: { tenant: '${principal.tenant}' },
      },
    ],
    tenants: { demo: { tools: { allow: ['*'], deny: [] } }, ...(demo2.length > 0 ? { demo2: { tools: { allow: ['*'], deny: [] } } } : {}) },
    logging: { level: env.LOG_LEVEL ?? 'info' },
  };
  const config = validateConfigObject(raw, packageRoot(), undefined);
  return { config, apiKey, generated: !(fromEnv && fromEnv.length > 0) };
}
