// toolgate as benchmarked: HS256 JWT auth, the demo function tools, validation, the full policy chain
// (audit events to a JSONL file, an active per-user rate limit in the in-memory store), metrics, and JSON
// logs at info through an asynchronous pino destination to /dev/null (real logging cost, no terminal).
// BENCH_AUTH_CACHE_MAX=0 turns the verified-token cache off.
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino, { type LoggerOptions } from 'pino';
import { buildServer } from '../../src/app.js';
import { packageRoot } from '../../src/config/demo.js';
import { validateConfigObject } from '../../src/config/load.js';
import { loggerOptions } from '../../src/observability/logger.js';
import { BENCH_AUDIENCE, BENCH_ISSUER, BENCH_JWT_SECRET } from './token.js';

const cacheMax = Number(process.env.BENCH_AUTH_CACHE_MAX ?? 10000);
const auditPath = join(tmpdir(), `toolgate-bench-audit-${process.pid}.jsonl`);
const config = validateConfigObject(
  {
    server: { maxInFlight: 4096 },
    auth: { jwt: { secret: BENCH_JWT_SECRET, issuer: BENCH_ISSUER, audience: BENCH_AUDIENCE }, cache: { max: cacheMax } },
    audit: { sink: 'file', path: auditPath },
    functions: [{ module: './examples/functions/demo-tools.mjs' }],
    tenants: { bench: { tools: { allow: ['*'] }, policies: { 'rate-limit': { limit: 100_000_000, windowMs: 60_000, per: 'user' } } } },
    logging: { level: 'info' },
  },
  packageRoot(),
  undefined,
);

const destination = pino.destination({ dest: '/dev/null', sync: false, minLength: 4096 });
const logger = pino(loggerOptions(config) as LoggerOptions, destination);
const app = await buildServer(config, { loggerInstance: logger, defaultMetrics: true });
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
process.on('SIGTERM', () => {
  void app.close().then(() => {
    destination.flushSync();
    rmSync(auditPath, { force: true });
    process.exit(0);
  });
});
