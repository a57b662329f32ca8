// toolgate as benchmarked: HS256 JWT auth, the demo function tools, validation, the full policy chain
// (audit events to a JSONL file, an active per-user rate limit in the in-memory store), metrics, and JSON
// logs at info through the destination `npm start` uses on stdout, aimed at /dev/null (real logging cost, no terminal).
// BENCH_AUTH_CACHE_MAX=0 turns the verified-token cache off. BENCH_CHAIN=hot-path measures exactly the
// hot path issue 2 names (JWT, validation, metrics, logging): audit sink off and no rate limit configured.
// BENCH_AUDIT_CHAIN=on adds audit.chain to the file audit (hash-chained events, checkpoints signed with a key
// made at start into a second file, at the default pace): `BENCH_AB_CHAIN=audit-chain npm run bench:ab -- . .`
// pairs it with the same build without the chain. BENCH_GUARDRAILS=on gives the tenant the guardrails rules
// of issue 50 (mask secrets and personal data, flag injection in results, block secrets in send_* arguments):
// `BENCH_AB_CHAIN=guardrails npm run bench:ab -- . .` pairs the hot path without and with them on a 2 KiB result.
// BENCH_BUDGET=on adds one budget the calls never reach (per user, per day, 10^9 calls: every call is charged in
// the memory store): `BENCH_AB_CHAIN=budget npm run bench:ab -- . .` pairs the hot path with that budget.
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// The gateway under test is the compiled output `npm start` runs (npm run bench builds it first), not the
// TypeScript under tsx: esbuild's keepNames wraps every named closure in a defineProperty call at run time.
// Its logger and log destination come from there too. Falls back to the sources when nothing is built (the
// bench smoke test under a bare `npm test`).
const built = existsSync(new URL('../../dist/src/app.js', import.meta.url));
const load = <T>(module: string): Promise<T> => import(built ? new URL(`../../dist/src/${module}`, import.meta.url).href : `../../src/${module}`) as Promise<T>;
const { buildServer } = await load<typeof import('../../src/app.js')>('app.js');
const { BatchedLineWriter } = await load<typeof import('../../src/observability/batched-line-writer.js')>('observability/batched-line-writer.js');
const { createLogger } = await load<typeof import('../../src/observability/logger.js')>('observability/logger.js');
import { packageRoot } from '../../src/config/demo.js';
import { validateConfigObject } from '../../src/config/load.js';
import { BENCH_AUDIENCE, BENCH_ISSUER, BENCH_JWT_SECRET } from './token.js';

const GUARDRAIL_RULES = [
  { tools: ['*'], on: 'result', detect: ['secrets', 'pii'], action: 'mask' },
  { tools: ['*'], on: 'result', detect: ['injection'], action: 'flag' },
  { tools: ['send_*'], on: 'arguments', detect: ['secrets'], action: 'block' },
];
const cacheMax = Number(process.env.BENCH_AUTH_CACHE_MAX ?? 10000);
const hotPathOnly = process.env.BENCH_CHAIN === 'hot-path';
const auditPath = join(tmpdir(), `toolgate-bench-audit-${process.pid}.jsonl`);
const checkpointsPath = join(tmpdir(), `toolgate-bench-checkpoints-${process.pid}.jsonl`);
const auditChain = process.env.BENCH_AUDIT_CHAIN === 'on' && !hotPathOnly
  ? {
      checkpoints: { sink: 'file', path: checkpointsPath },
      signing: { keys: [{ id: 'bench', privateKey: generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }] },
    }
  : undefined;
const budgets = process.env.BENCH_BUDGET === 'on' ? [{ id: 'bench', scope: 'user', period: 'day', calls: 1_000_000_000 }] : [];
const config = validateConfigObject(
  {
    server: { maxInFlight: 4096 },
    auth: { jwt: { secret: BENCH_JWT_SECRET, issuer: BENCH_ISSUER, audience: BENCH_AUDIENCE }, cache: { max: cacheMax } },
    audit: hotPathOnly ? { sink: 'off' } : { sink: 'file', path: auditPath, ...(auditChain ? { chain: auditChain } : {}) },
    functions: [{ module: './examples/functions/demo-tools.mjs' }, { module: './bench/gateway/result-2k.mjs' }],
    tenants: {
      bench: {
        tools: { allow: ['*'] },
        budgets,
        policies: hotPathOnly ? {} : { 'rate-limit': { limit: 100_000_000, windowMs: 60_000, per: 'user' } },
        ...(process.env.BENCH_GUARDRAILS === 'on' ? { guardrails: GUARDRAIL_RULES } : {}),
      },
    },
    logging: { level: 'info' },
  },
  packageRoot(),
  undefined,
);

// The logger and destination `npm start` logs through on stdout (src/app.ts, src/observability/stdout.ts, batched-line-writer.ts), aimed at /dev/null.
const destination = new BatchedLineWriter('/dev/null');
const logger = createLogger(config, destination);
const app = await buildServer(config, { loggerInstance: logger, defaultMetrics: true });
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
process.on('SIGTERM', () => {
  void app.close().then(() => {
    destination.flushSync();
    rmSync(auditPath, { force: true });
    rmSync(checkpointsPath, { force: true });
    process.exit(0);
  });
});
