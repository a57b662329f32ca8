// `npm run openapi`: regenerates openapi.yaml from the route schemas (the single source), then the
// console's API types from it. test/openapi.test.ts fails when either committed file drifts.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../src/app.js';
import { demoConfig, packageRoot } from '../src/config/demo.js';
import { CONSOLE_API_TYPES_PATH, writeConsoleApiTypes } from './console-api-types.js';

/** A fixed key: the document must not depend on the environment or on a random demo key. */
const GENERATOR_ENV: NodeJS.ProcessEnv = { TOOLGATE_DEV_API_KEY: 'tg_openapi_generator', LOG_LEVEL: 'silent' };

export const GENERATOR_API_KEY = GENERATOR_ENV.TOOLGATE_DEV_API_KEY!;
export const OPENAPI_PATH = join(packageRoot(), 'openapi.yaml');

/** The demo app, built (not listening) and ready: every route, and so every schema, is registered. */
export async function buildOpenapiApp(): Promise<FastifyInstance> {
  const { config } = demoConfig(GENERATOR_ENV);
  const app = await buildServer(config, { logger: false, defaultMetrics: false, env: GENERATOR_ENV });
  await app.ready();
  return app;
}

/** The OpenAPI document as YAML, exactly as `npm run openapi` writes it. */
export async function generateOpenapiYaml(): Promise<string> {
  const app = await buildOpenapiApp();
  try {
    const yaml = app.swagger({ yaml: true });
    return yaml.endsWith('\n') ? yaml : `${yaml}\n`;
  } finally {
    await app.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const yaml = await generateOpenapiYaml();
  await writeFile(OPENAPI_PATH, yaml);
  process.stdout.write(`wrote ${OPENAPI_PATH} (${yaml.length} bytes)\n`);
  if (await writeConsoleApiTypes()) process.stdout.write(`wrote ${CONSOLE_API_TYPES_PATH}\n`);
}
