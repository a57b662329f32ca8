// Heap bytes and young-generation GC per request of a hot-path server (BENCH_CHAIN=hot-path), A and B alternating,
// each run in a fresh process: V8's --trace-gc-nvp lines between two markers (bench/gc-marker.mjs) after a warm-up,
// summed over the GCs in the window. Allocation and survival counts move little with the machine's load (the GC
// pause does, and is shown as an indication only). A scavenge's survivors are what it copies: objects alive at
// that moment (requests in flight, bounded copies such as the recent audit) and everything V8 itself keeps young.
// Usage: npx tsx bench/gc-per-request.ts <checkout A> <checkout B> [runs per side, 3] [requests, 30000] [warm-up, 8000]
// (each checkout built: the servers run its compiled output). BENCH_CONNECTIONS (default 32).
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { benchRequest } from './gateway/targets.js';
import { firstLine, pinProcess, SERVER_CORE, stopChild } from './pinned.js';
import { median } from './summary.js';

const MARKER = 'GC-WINDOW-MARKER';

export interface GcWindow {
  requests: number;
  /** GCs in the window; `markCompacts` of them full collections. */
  gcs: number;
  markCompacts: number;
  allocatedPerRequest: number;
  /** Bytes a young-generation GC kept (survived in new space plus promoted), per GC. */
  survivedPerGc: number;
  pauseMicrosPerRequest: number;
}

/** Sums the --trace-gc-nvp lines of one window (`name=value` pairs). */
export function gcWindow(text: string, requests: number): GcWindow {
  let gcs = 0;
  let markCompacts = 0;
  let allocated = 0;
  let survived = 0;
  let pause = 0;
  for (const line of text.split('\n')) {
    const fields = new Map(Array.from(line.matchAll(/(\w+)=([\w.]+)/g), (match) => [match[1]!, match[2]!]));
    if (!fields.has('allocated')) continue;
    gcs += 1;
    if (fields.get('gc') !== 's') markCompacts += 1;
    allocated += Number(fields.get('allocated'));
    survived += Number(fields.get('new_space_survived') ?? 0) + Number(fields.get('promoted') ?? 0);
    pause += Number(fields.get('pause') ?? 0);
  }
  return { requests, gcs, markCompacts, allocatedPerRequest: allocated / requests, survivedPerGc: gcs ? survived / gcs : 0, pauseMicrosPerRequest: (pause * 1000) / requests };
}

/** A fixed number of bench requests (autocannon in this process); fails on any non-2xx or error. Returns how many were made. */
export async function loadRequests(
  what: string,
  spec: { url: string; connections: number; amount: number; headers: Record<string, string>; body: string },
): Promise<number> {
  const result = await autocannon({ ...spec, method: 'POST', timeout: 60 });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${what}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.total;
}

export interface WindowOptions {
  warmup: number;
  connections: number;
  /** Added to the server's environment (after BENCH_CHAIN=hot-path). */
  env?: Record<string, string>;
  /** Node flags for the server, before its script. */
  flags?: readonly string[];
  /** Pin the server (every thread) to the server core once it listens, as bench:ab does. */
  pin?: boolean;
}

/**
 * A hot-path server of `checkout` with V8's --trace-gc-nvp and the window markers (bench/gc-marker.mjs): warmed up with
 * `warmup` requests, then `during` runs between the two markers. Answers what `during` answered and the server's
 * stdout between the markers.
 */
export async function markedWindow<T>(
  checkout: string,
  options: WindowOptions,
  during: (server: { pid: number; load: (amount: number) => Promise<number> }) => Promise<T>,
): Promise<{ value: T; window: string }> {
  const marker = fileURLToPath(new URL('gc-marker.mjs', import.meta.url));
  const args = ['--trace-gc-nvp', '--allow-natives-syntax', ...(options.flags ?? []), '--import', marker, '--import', 'tsx', resolve(checkout, 'bench/gateway/toolgate-server.ts')];
  const child = spawn(process.execPath, args, { cwd: checkout, env: { ...process.env, BENCH_CHAIN: 'hot-path', ...options.env }, stdio: ['pipe', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  try {
    const port = await firstLine(child, checkout, 120_000, (line) => (line.startsWith('{') ? (JSON.parse(line) as { port: number }).port : undefined));
    // firstLine's reader pauses the stream when it closes: the GC lines must keep flowing (a full pipe stalls the server).
    child.stdout.resume();
    if (options.pin) pinProcess(child.pid, SERVER_CORE);
    const { headers, body } = await benchRequest();
    const url = `http://127.0.0.1:${port}/v1/execute`;
    const load = (amount: number): Promise<number> => loadRequests(checkout, { url, connections: options.connections, amount, headers, body });
    const pause = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));
    await load(options.warmup);
    child.kill('SIGUSR2');
    await pause(200);
    const value = await during({ pid: child.pid!, load });
    await pause(200);
    child.kill('SIGUSR2');
    await pause(200);
    await stopChild(child);
    const parts = output.split(MARKER);
    if (parts.length < 3) throw new Error(`${checkout}: no GC window markers in the server's output`);
    return { value, window: parts[1]! };
  } finally {
    await stopChild(child);
  }
}

async function measure(checkout: string, requests: number, warmup: number, connections: number): Promise<GcWindow> {
  const { value, window } = await markedWindow(checkout, { warmup, connections }, ({ load }) => load(requests));
  return gcWindow(window, value);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [a, b, runs = '3', requests = '30000', warmup = '8000'] = process.argv.slice(2);
  if (!a || !b) throw new Error('usage: npx tsx bench/gc-per-request.ts <checkout A> <checkout B> [runs] [requests] [warm-up]');
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
  const sides = { A: { checkout: resolve(a), windows: [] as GcWindow[] }, B: { checkout: resolve(b), windows: [] as GcWindow[] } };
  for (let run = 0; run < Number(runs); run += 1) {
    // Alternating which side goes first, so a drift of the machine falls on both.
    for (const side of run % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
      const window = await measure(sides[side].checkout, Number(requests), Number(warmup), connections);
      sides[side].windows.push(window);
      process.stdout.write(`${side} run ${run + 1}: ${JSON.stringify(window)}\n`);
    }
  }
  for (const [side, { checkout, windows }] of Object.entries(sides)) {
    const med = (pick: (window: GcWindow) => number): string => median(windows.map(pick)).toFixed(0);
    process.stdout.write(
      `${side} ${checkout}: median allocated ${med((w) => w.allocatedPerRequest)} B/request, survived ${med((w) => w.survivedPerGc / 1024)} KiB per GC, ` +
        `GC pause ${median(windows.map((w) => w.pauseMicrosPerRequest)).toFixed(2)} µs/request (indication only)\n`,
    );
  }
}
