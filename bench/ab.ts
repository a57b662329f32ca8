// `npm run bench:ab -- <checkout A> <checkout B>`: a paired comparison of two builds of toolgate (two
// worktrees, say `git worktree add ../before HEAD~1`, each with `npm run build` run in it). Every round
// starts the bare route and both toolgates afresh and measures them in turn, so each toolgate is judged
// by its ratio to the bare route of the same round: the machine's drift and a process's luck cancel out
// more than in means taken minutes apart. Loopback only, bounded.
// Env: BENCH_AB_CHAIN (`hot-path`, default, or `full`), and BENCH_ROUNDS (default 6), BENCH_DURATION,
// BENCH_CONNECTIONS, BENCH_WARMUP as for `npm run bench`.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { optionsFromEnv, type GatewayBenchOptions } from './gateway.js';
import { benchRequest, measureRounds, type Target } from './gateway/targets.js';
import { aggregate } from './summary.js';

export interface AbOptions extends GatewayBenchOptions {
  chain: 'hot-path' | 'full';
}

const fmt = (value: number, digits = 0): string => value.toFixed(digits);

function toolgateOf(label: string, checkout: string, chain: AbOptions['chain']): Target {
  const script = resolve(checkout, 'bench', 'gateway', 'toolgate-server.ts');
  if (!existsSync(script)) throw new Error(`${checkout} has no bench/gateway/toolgate-server.ts`);
  return { label, script, env: chain === 'hot-path' ? { BENCH_CHAIN: 'hot-path' } : {}, runs: [] };
}

/** What a checkout's server runs: its compiled output, or its sources under tsx when it was not built. */
const buildOf = (checkout: string): string =>
  existsSync(resolve(checkout, 'dist', 'src', 'app.js')) ? 'compiled output' : 'sources under tsx (not built: run npm run build there)';

export async function abBench(checkoutA: string, checkoutB: string, options: Partial<AbOptions> = {}): Promise<string> {
  const fromEnv = optionsFromEnv();
  const defaults = { ...fromEnv, rounds: process.env.BENCH_ROUNDS === undefined ? 6 : fromEnv.rounds, chain: 'hot-path' as const };
  const { durationSec, rounds, connections, warmupSec, chain } = { ...defaults, ...options };
  const { headers, body } = await benchRequest();
  const bare: Target = { label: 'bare Fastify route', script: 'bare-server.ts', env: {}, runs: [] };
  const a = toolgateOf('A', checkoutA, chain);
  const b = toolgateOf('B', checkoutB, chain);
  await measureRounds([bare, a, b], rounds, { connections, durationSec, warmupSec, headers, body });

  const ratio = (target: Target, round: number): number => target.runs[round]!.requestsPerSec / bare.runs[round]!.requestsPerSec;
  const cpu = (target: Target, round: number): string => {
    const micros = target.runs[round]!.serverCpuMicrosPerRequest;
    return micros === undefined ? '—' : fmt(micros, 1);
  };
  const rows = bare.runs.map(
    (run, i) => `| ${i + 1} | ${fmt(run.requestsPerSec)} | ${fmt(ratio(a, i), 3)} | ${fmt(ratio(b, i), 3)} | ${cpu(a, i)} | ${cpu(b, i)} |`,
  );
  const ahead = bare.runs.filter((_, i) => ratio(b, i) > ratio(a, i)).length;
  const behind = bare.runs.filter((_, i) => ratio(b, i) < ratio(a, i)).length;
  const [base, left, right] = [aggregate(bare.runs), aggregate(a.runs), aggregate(b.runs)];
  const cpuLine = left.cpuMicros !== undefined && right.cpuMicros !== undefined ? `; server CPU per request A ${fmt(left.cpuMicros, 1)} µs, B ${fmt(right.cpuMicros, 1)} µs` : '';
  return [
    `## A/B: ${chain === 'hot-path' ? 'the hot path' : 'the full chain'} of two toolgate builds against the bare route`,
    '',
    `A: ${checkoutA} (${buildOf(checkoutA)})`,
    `B: ${checkoutB} (${buildOf(checkoutB)})`,
    `${rounds} round(s): all three servers fresh each round, ${warmupSec} s warm-up, ${durationSec} s measured, ${connections} connections.`,
    '',
    '| round | bare req/s | A / bare | B / bare | A CPU µs/req | B CPU µs/req |',
    '|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    `Ratio of means: A ${fmt(left.rps / base.rps, 3)}, B ${fmt(right.rps / base.rps, 3)}${cpuLine}. ` +
      `B ahead of A in ${ahead} of ${rounds} round(s), behind in ${behind}. Failed requests: ${base.failures + left.failures + right.failures}.`,
    '',
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const [checkoutA, checkoutB] = process.argv.slice(2);
  if (!checkoutA || !checkoutB) {
    process.stderr.write('usage: npm run bench:ab -- <checkout A> <checkout B>\n');
    process.exit(2);
  }
  const chain = process.env.BENCH_AB_CHAIN === 'full' ? 'full' : 'hot-path';
  process.stdout.write(await abBench(resolve(checkoutA), resolve(checkoutB), { chain }));
}
