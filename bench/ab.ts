// `npm run bench:ab -- <A> <B>`: a paired comparison of two builds of toolgate. Each side is a checkout
// directory (used as it is: run `npm run build` there first) or a commit-ish of this repository (checked out
// into a temporary git worktree, installed and built, removed at the end), e.g.
// `npm run bench:ab -- 117fb9e .`. Two comparisons, each a table:
// - hot path: toolgate's POST /v1/execute of an in-process function tool against the bare Fastify route;
// - MCP: toolgate's POST /v1/execute → server-everything `echo` over stdio against the MCP floor (Fastify
//   and one SDK client → echo, bench/mcp-targets.ts).
// Every round starts the baseline and both toolgates afresh and measures them in turn, so each toolgate is
// judged by its ratio to the baseline of the same round: the machine's drift and a process's luck cancel
// out more than in means taken minutes apart. Loopback only, bounded.
// Env: BENCH_AB_CHAIN (`hot-path`, default, or `full`: the hot-path comparison with file audit and a rate
// limit, or `audit-chain`: `full` on A, `full` with audit.chain and signed checkpoints on B — run it with
// the same checkout on both sides, `npm run bench:ab -- . .`, or `guardrails`: the hot path on A, the hot path with
// issue 50's guardrail rules on B, both answering the 2 KiB result of bench/gateway/result-2k.mjs, or `budget`: the hot
// path on A, the hot path with one budget on B, also `. .`), BENCH_ONLY (`gateway`, `mcp`: one comparison), BENCH_ROUNDS (default 6), BENCH_DURATION,
// BENCH_WARMUP, BENCH_CONNECTIONS (hot path, default 32) as for `npm run bench`, BENCH_MCP_CONNECTIONS (16).
// BENCH_AB_NODE_OPTIONS_B: NODE_OPTIONS for B's hot-path server only, e.g. `--max-semi-space-size=16` with `. .`
// (what a V8 flag of the start script or the image costs the hot path; docs/configuration.md).
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkoutOf, type Checkout } from './checkout.js';
import { optionsFromEnv, type GatewayBenchOptions } from './gateway.js';
import { benchRequest, measureRounds, type Target } from './gateway/targets.js';
import { BENCH_API_KEY, BENCH_METRICS_TOKEN } from './mcp-keys.js';
import { aggregate, median } from './summary.js';
import { packageRoot } from '../src/config/demo.js';

export type AbSection = 'gateway' | 'mcp';

export interface AbOptions extends GatewayBenchOptions {
  chain: 'hot-path' | 'full' | 'audit-chain' | 'guardrails' | 'budget';
  sections: AbSection[];
  mcpConnections: number;
  /** How the report names the two sides (default: their directories). */
  names: [string, string];
}

const fmt = (value: number, digits = 0): string => value.toFixed(digits);

function serverScript(checkout: string, path: string): string {
  const script = resolve(checkout, path);
  if (!existsSync(script)) throw new Error(`${checkout} has no ${path}`);
  return script;
}

/** What a checkout's server runs: its compiled output, or its sources under tsx when it was not built. */
const buildOf = (checkout: string): string =>
  existsSync(resolve(checkout, 'dist', 'src', 'app.js')) ? 'compiled output' : 'sources under tsx (not built: run npm run build there)';

interface Comparison {
  title: string;
  /** What the table's columns call the baseline. */
  baseName: string;
  unit: 'req' | 'call';
  notes: string[];
  targets: [Target, Target, Target];
}

interface Outcome {
  markdown: string[];
  /** Ratio of means to the baseline, A then B. */
  ratios: [number, number];
  /** The median over rounds of B / A within a round: one slow round (a stdio upstream's bad luck) moves it least. */
  medianPaired: number;
}

async function compare(comparison: Comparison, rounds: number, spec: Parameters<typeof measureRounds>[2]): Promise<Outcome> {
  const [base, a, b] = comparison.targets;
  await measureRounds(comparison.targets, rounds, spec);
  const ratio = (target: Target, round: number): number => target.runs[round]!.requestsPerSec / base.runs[round]!.requestsPerSec;
  const cpu = (target: Target, round: number): string => {
    const micros = target.runs[round]!.serverCpuMicrosPerRequest;
    return micros === undefined ? '—' : fmt(micros, 1);
  };
  const rows = base.runs.map(
    (run, i) => `| ${i + 1} | ${fmt(run.requestsPerSec)} | ${fmt(ratio(a, i), 3)} | ${fmt(ratio(b, i), 3)} | ${cpu(a, i)} | ${cpu(b, i)} |`,
  );
  const ahead = base.runs.filter((_, i) => ratio(b, i) > ratio(a, i)).length;
  const behind = base.runs.filter((_, i) => ratio(b, i) < ratio(a, i)).length;
  const [mean, left, right] = [aggregate(base.runs), aggregate(a.runs), aggregate(b.runs)];
  const ratios: [number, number] = [left.rps / mean.rps, right.rps / mean.rps];
  const medianPaired = median(base.runs.map((_, i) => ratio(b, i) / ratio(a, i)));
  const cpuLine =
    left.cpuMicros !== undefined && right.cpuMicros !== undefined ? `; CPU per ${comparison.unit} A ${fmt(left.cpuMicros, 1)} µs, B ${fmt(right.cpuMicros, 1)} µs` : '';
  return {
    ratios,
    medianPaired,
    markdown: [
      `### ${comparison.title}`,
      '',
      ...comparison.notes,
      '',
      `| round | ${comparison.baseName} req/s | A / ${comparison.baseName} | B / ${comparison.baseName} | A CPU µs/${comparison.unit} | B CPU µs/${comparison.unit} |`,
      '|---:|---:|---:|---:|---:|---:|',
      ...rows,
      '',
      `Ratio of means: A ${fmt(ratios[0], 3)}, B ${fmt(ratios[1], 3)}, B / A ${fmt(ratios[1] / ratios[0], 3)}; median of the rounds' B / A ${fmt(medianPaired, 3)}${cpuLine}. ` +
        `B ahead of A in ${ahead} of ${rounds} round(s), behind in ${behind}. Failed requests: ${mean.failures + left.failures + right.failures}.`,
      '',
    ],
  };
}

function gatewayComparison(checkoutA: string, checkoutB: string, chain: AbOptions['chain'], connections: number): Comparison {
  const script = 'bench/gateway/toolgate-server.ts';
  const env: Record<string, string> = chain === 'hot-path' || chain === 'guardrails' || chain === 'budget' ? { BENCH_CHAIN: 'hot-path' } : {};
  // audit-chain, guardrails, budget: one build twice, B with the audit chain, the guardrails or one budget on (bench/gateway/toolgate-server.ts).
  const chainB: Record<string, string> =
    chain === 'audit-chain' ? { BENCH_AUDIT_CHAIN: 'on' } : chain === 'guardrails' ? { ...env, BENCH_GUARDRAILS: 'on' } : chain === 'budget' ? { ...env, BENCH_BUDGET: 'on' } : env;
  const nodeOptionsB = process.env.BENCH_AB_NODE_OPTIONS_B;
  const envB = nodeOptionsB ? { ...chainB, NODE_OPTIONS: nodeOptionsB } : chainB;
  const titles: Record<AbOptions['chain'], string> = {
    'hot-path': 'hot path',
    full: 'full chain',
    'audit-chain': 'full chain, B with audit.chain on',
    guardrails: 'hot path, B with guardrails on',
    budget: 'hot path, B with one budget on',
  };
  return {
    title: `Hot path: toolgate's ${titles[chain]} against the bare route`,
    baseName: 'bare',
    unit: 'req',
    notes: [
      `POST /v1/execute of the ${chain === 'guardrails' ? '2 KiB result_2k' : 'demo get_weather'} function tool with an HS256 JWT, ${connections} connections. ` +
        (chain === 'guardrails'
          ? 'The hot path on both; B with issue 50\'s guardrail rules (mask secrets and personal data, flag injection, block secrets in send_* arguments).'
          : chain === 'hot-path' || chain === 'budget'
          ? 'JWT (token cache on), validation, metrics, info logging; audit sink off, no rate limit.' +
            (chain === 'budget' ? ' B also has one budget (per user, per day, 10^9 calls) that charges every call in the memory store.' : '')
          : chain === 'audit-chain'
            ? 'The full policy chain with file audit and an active rate limit; B also hash-chains every event and signs checkpoints into a second file.'
            : 'The full policy chain with file audit and an active rate limit.') +
        ' The bare route is a Fastify route doing the same JSON work. CPU: the server process.' +
        (nodeOptionsB ? ` B's server runs with NODE_OPTIONS=${nodeOptionsB}.` : ''),
    ],
    targets: [
      { label: 'bare Fastify route', script: 'bare-server.ts', env: {}, runs: [] },
      { label: 'A', script: serverScript(checkoutA, script), env, runs: [] },
      { label: 'B', script: serverScript(checkoutB, script), env: envB, runs: [] },
    ],
  };
}

function mcpComparison(checkoutA: string, checkoutB: string, connections: number): Comparison {
  const script = 'bench/mcp-targets.ts';
  const toolgate = (label: string, checkout: string): Target => ({
    label,
    script: serverScript(checkout, script),
    args: ['toolgate'],
    env: {},
    metricsToken: BENCH_METRICS_TOKEN,
    runs: [],
  });
  return {
    title: 'MCP: toolgate → server-everything echo over stdio against the MCP floor',
    baseName: 'floor',
    unit: 'call',
    notes: [
      `POST /v1/execute of \`echo\` with an API key, ${connections} connections, each server with its own stdio upstream. ` +
        "The floor is a Fastify route holding one SDK client (this checkout's bench/mcp-targets.ts). " +
        "CPU: the server and its stdio upstream. Any call toolgate's metrics count as failed fails the bench.",
    ],
    targets: [{ label: 'MCP floor', script: serverScript(packageRoot(), script), args: ['floor'], env: {}, runs: [] }, toolgate('A', checkoutA), toolgate('B', checkoutB)],
  };
}

const whole = (value: string | undefined, fallback: number): number => {
  const parsed = Number(value);
  return Number.isInteger(parsed) && parsed > 0 ? parsed : fallback;
};

/** The comparisons of two checkout directories, as markdown. */
export async function abBench(checkoutA: string, checkoutB: string, options: Partial<AbOptions> = {}): Promise<string> {
  const fromEnv = optionsFromEnv();
  const only = process.env.BENCH_ONLY?.split(',').map((name) => name.trim());
  const defaults: AbOptions = {
    ...fromEnv,
    rounds: process.env.BENCH_ROUNDS === undefined ? 6 : fromEnv.rounds,
    chain: (['full', 'audit-chain', 'guardrails', 'budget'] as const).find((chain) => chain === process.env.BENCH_AB_CHAIN) ?? 'hot-path',
    sections: (['gateway', 'mcp'] as const).filter((name) => !only || only.includes(name)),
    mcpConnections: whole(process.env.BENCH_MCP_CONNECTIONS, 16),
    names: [checkoutA, checkoutB],
  };
  const { durationSec, rounds, connections, warmupSec, chain, sections, mcpConnections, names } = { ...defaults, ...options };
  if (sections.length === 0) throw new Error('bench:ab: no comparison selected (BENCH_ONLY takes gateway, mcp)');
  // Every script is looked up before anything is measured: a checkout without one fails at once.
  const comparisons: Array<[Comparison, Parameters<typeof measureRounds>[2], string]> = [];
  const timing = { durationSec, warmupSec };
  if (sections.includes('gateway')) {
    if (chain === 'guardrails') process.env.BENCH_TOOL ??= 'result_2k';
    const request = await benchRequest();
    comparisons.push([gatewayComparison(checkoutA, checkoutB, chain, connections), { ...timing, connections, ...request }, `${chain} / bare route`]);
  }
  if (sections.includes('mcp')) {
    const request = {
      headers: { 'content-type': 'application/json', authorization: `Bearer ${BENCH_API_KEY}` },
      body: JSON.stringify({ name: 'echo', arguments: { message: 'hello' } }),
    };
    comparisons.push([mcpComparison(checkoutA, checkoutB, mcpConnections), { ...timing, connections: mcpConnections, ...request }, 'MCP echo / floor']);
  }

  const details: string[] = [];
  const summary: string[] = [];
  for (const [comparison, spec, name] of comparisons) {
    const { markdown, ratios, medianPaired } = await compare(comparison, rounds, spec);
    details.push(...markdown);
    summary.push(`| ${name} | ${fmt(ratios[0], 3)} | ${fmt(ratios[1], 3)} | ${fmt(ratios[1] / ratios[0], 3)} | ${fmt(medianPaired, 3)} |`);
  }
  return [
    '## A/B: two toolgate builds, each against the same baseline in the same round',
    '',
    `A: ${names[0]} (${buildOf(checkoutA)})`,
    `B: ${names[1]} (${buildOf(checkoutB)})`,
    `${rounds} round(s) per comparison: every server fresh each round, ${warmupSec} s warm-up, ${durationSec} s measured, the order alternating.`,
    '',
    '| comparison (ratio of means) | A | B | B / A | median of rounds\' B / A |',
    '|---|---:|---:|---:|---:|',
    ...summary,
    '',
    ...details,
  ].join('\n');
}

const nameOf = (checkout: Checkout): string => (checkout.commit === undefined ? checkout.dir : `${checkout.spec} = ${checkout.commit.slice(0, 12)}`);

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const [specA, specB] = process.argv.slice(2);
  if (!specA || !specB) {
    process.stderr.write('usage: npm run bench:ab -- <A> <B>   (each a checkout directory or a commit-ish, e.g. 117fb9e .)\n');
    process.exit(2);
  }
  const made: Checkout[] = [];
  const cleanUp = async (): Promise<void> => {
    await Promise.all(made.map((checkout) => checkout.remove()));
  };
  // Ctrl-C during a run still removes the temporary worktrees.
  process.once('SIGINT', () => void cleanUp().then(() => process.exit(130)));
  try {
    for (const spec of [specA, specB]) {
      if (!existsSync(spec)) process.stderr.write(`bench:ab: checking out ${spec} into a temporary worktree (npm ci, npm run build)…\n`);
      made.push(await checkoutOf(spec));
    }
    const [a, b] = made as [Checkout, Checkout];
    process.stdout.write(await abBench(a.dir, b.dir, { names: [nameOf(a), nameOf(b)] }));
  } finally {
    await cleanUp();
  }
}
