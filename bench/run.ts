// `npm run bench`: runs every bench section present (each a module exporting `bench(): Promise<string>`
// returning markdown), one after another so they never compete for the cores, prints them and writes the
// run into bench/results.md, above the history kept there. "anchors" (toolgate against the minimal composition
// and the MCP floor, in one table) runs first. Sections added by other work (mcp, rag,
// registry) are picked up when their file exists.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../src/config/demo.js';
import { withLatestRun } from './results-file.js';

const SECTIONS = ['anchors', 'gateway', 'mcp', 'mcp-eras', 'rag', 'registry', 'openapi', 'code-mode', 'cedar'] as const;
const benchDir = join(packageRoot(), 'bench');

interface BenchModule {
  bench: () => Promise<string>;
}

const only = process.env.BENCH_ONLY?.split(',').map((name) => name.trim());
const parts: string[] = [
  '## Latest run',
  '',
  `Node ${process.version}, ${cpus().length} CPU(s) (${cpus()[0]?.model ?? 'unknown'}), loopback only.`,
  '',
];
let failed = false;
const runStarted = performance.now();
const took: string[] = [];

for (const name of SECTIONS) {
  if (only && !only.includes(name)) continue;
  const file = join(benchDir, `${name}.ts`);
  if (!existsSync(file)) {
    process.stderr.write(`bench: no bench/${name}.ts, skipping\n`);
    continue;
  }
  process.stderr.write(`bench: running ${name}…\n`);
  const sectionStarted = performance.now();
  try {
    const section = (await import(pathToFileURL(file).href)) as BenchModule;
    const markdown = await section.bench();
    process.stdout.write(`${markdown}\n`);
    parts.push(markdown);
  } catch (error) {
    failed = true;
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`bench: section ${name} failed: ${message}\n`);
    parts.push(`## ${name}\n\nfailed: ${message}\n`);
  }
  took.push(`${name} ${Math.round((performance.now() - sectionStarted) / 1000)} s`);
}

// The whole run is meant to stay under 5 minutes on this 2-core machine: say how long it took.
const timing = `Whole run: ${Math.round((performance.now() - runStarted) / 1000)} s (${took.join(', ')}).`;
process.stdout.write(`${timing}\n`);
parts.push('', timing);

const out = join(benchDir, 'results.md');
const previous = existsSync(out) ? await readFile(out, 'utf8') : undefined;
await writeFile(out, withLatestRun(previous, parts.join('\n')));
process.stderr.write(`bench: wrote ${out}\n`);
process.exitCode = failed ? 1 : 0;
