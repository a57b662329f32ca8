// In-process cost of guardrails on the bench's 2 KiB result (bench/results.md, issue 50): µs per scan with the
// bench's result rules, and per built-in detector over the same text. CPU time (process.cpuUsage) beside wall
// time: less sensitive to neighbours on a shared machine. The tool answers a different listing on every call:
// 256 of them are made first and scanned in turn (no scan sees the text it saw last).
// `npx tsx bench/guardrails-scan.ts [runs]`.
import { compileGuardrails } from '../src/guardrails/compile.js';
import { BUILTIN_DETECTORS } from '../src/guardrails/detectors.js';
import { resultSurfaces } from '../src/guardrails/result.js';
import { scan } from '../src/guardrails/scan.js';
import type { ToolResult } from '../src/call/types.js';
import type { Finding } from '../src/guardrails/types.js';
const tools = (await import('./gateway/result-2k.mjs' as string)).default as Array<{ handler: () => unknown }>;

const runs = Number(process.argv[2] ?? 20_000);
const outputs = Array.from({ length: 256 }, () => JSON.stringify(tools[0]!.handler()));
const results = outputs.map((output) => ({ callId: 'c', name: 'result_2k', ok: true, output, source: 'function', durationMs: 0, truncated: false, trace: null }) as unknown as ToolResult);
let turn = 0;
const guardrails = compileGuardrails([
  { tools: ['*'], on: 'result', detect: ['secrets', 'pii'], action: 'mask' },
  { tools: ['*'], on: 'result', detect: ['injection'], action: 'flag' },
  { tools: ['send_*'], on: 'arguments', detect: ['secrets'], action: 'block' },
])!;
const rules = guardrails.rulesFor('result_2k', 'result');
const hashKey = guardrails.hashKey('bench');

function time(label: string, body: () => void | Promise<void>): Promise<void> {
  return (async () => {
    for (let i = 0; i < Math.min(2000, runs); i += 1) await body();
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < runs; i += 1) await body();
    const wall = ((performance.now() - started) * 1000) / runs;
    const used = process.cpuUsage(cpu);
    console.log(`${label.padEnd(22)} ${wall.toFixed(2).padStart(8)} µs wall ${((used.user + used.system) / runs).toFixed(2).padStart(8)} µs cpu`);
  })();
}

console.log(`${outputs[0]!.length} chars (${outputs.length} listings in turn), ${runs} runs, node ${process.version}`);
await time('scan (result rules)', async () => {
  const surfaces = resultSurfaces(results[(turn = (turn + 1) & 255)]!, guardrails.limits, false);
  const outcome = await scan({ direction: 'result', surfaces: surfaces.list, rules, limits: guardrails.limits, hashKey });
  if (outcome.kind !== 'scanned' || outcome.events.length > 0) throw new Error('the bench result should pass clean');
});
for (const detector of BUILTIN_DETECTORS) {
  await time(detector.name, () => {
    const out: Finding[] = [];
    detector.find(outputs[(turn = (turn + 1) & 255)]!, out);
  });
}
