// Embedded RAG backend benchmark: index build time for 10,000 generated chunks, then query latency
// (p50/p99) over 2,000 searches under a tenant filter. Bounded: a few seconds on a small machine.
import { pathToFileURL } from 'node:url';
import { createEmbeddedBackend } from '../src/rag/embedded-backend.js';
import type { RagDocument } from '../src/rag/load-documents.js';

const CHUNKS = 10_000;
const QUERIES = 2_000;
const TENANTS = ['acme', 'globex', 'initech', 'umbrella'];
const DEPARTMENTS = ['hr', 'finance', 'engineering', 'sales'];
const TOPICS =
  'vacation policy expense travel approval receipt deploy release incident on-call rotation security password vault office kitchen calendar onboarding laptop contract invoice budget review hiring salary benefits pension training conference remote hybrid parking badge visitor'.split(' ');
const SYLLABLES = 'ka lo mi ne ru sa te vo zi bar cen dor fel gan hup jor kel lum'.split(' ');

// A small deterministic generator, so every run indexes the same corpus.
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

// A few thousand made-up words besides the topic words: real knowledge bases have large vocabularies,
// and a tiny one would make every query match every chunk.
const WORDS = (() => {
  const next = random(1);
  const words = new Set<string>(TOPICS);
  while (words.size < 4000) {
    const length = 2 + Math.floor(next() * 3);
    words.add(Array.from({ length }, () => SYLLABLES[Math.floor(next() * SYLLABLES.length)]).join(''));
  }
  return [...words];
})();

// Skewed towards the front of the list (topic words), roughly like word frequencies in real text.
function word(next: () => number): string {
  return WORDS[Math.floor(next() ** 2.5 * WORDS.length)]!;
}

function sentence(next: () => number, words: number): string {
  return Array.from({ length: words }, () => word(next)).join(' ');
}

function generate(count: number): RagDocument[] {
  const next = random(42);
  // Each document is one chunk (text under the chunk bound), so the index holds exactly `count` chunks.
  return Array.from({ length: count }, (_, i) => ({
    id: `doc-${i}`,
    text: `${sentence(next, 40)}.\n\n${sentence(next, 40)}.`,
    source: `kb/doc-${i}.md`,
    metadata: { tenant: TENANTS[i % TENANTS.length], department: DEPARTMENTS[Math.floor(next() * DEPARTMENTS.length)] },
  }));
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export async function bench(): Promise<string> {
  const documents = generate(CHUNKS);
  const backend = createEmbeddedBackend({ documents });
  const buildStarted = performance.now();
  await backend.load();
  const buildMs = performance.now() - buildStarted;
  const chunks = backend.stats().chunks ?? 0;

  const next = random(7);
  const signal = new AbortController().signal;
  const latencies: number[] = [];
  for (let i = 0; i < QUERIES; i += 1) {
    const query = sentence(next, 1 + Math.floor(next() * 3));
    const tenant = TENANTS[i % TENANTS.length]!;
    const started = performance.now();
    const { hits } = await backend.search(query, { tenant }, 5, signal);
    latencies.push(performance.now() - started);
    if (hits.some((hit) => hit.metadata.tenant !== tenant)) throw new Error('bench: a hit crossed the tenant filter');
  }
  latencies.sort((a, b) => a - b);
  const ms = (value: number): string => value.toFixed(2);
  return [
    '### RAG (embedded backend, minisearch)',
    '',
    '| measure | value |',
    '|---|---|',
    `| chunks indexed | ${chunks} |`,
    `| index build | ${ms(buildMs)} ms |`,
    `| queries (tenant filter, topK 5) | ${QUERIES} |`,
    `| query p50 | ${ms(percentile(latencies, 50))} ms |`,
    `| query p99 | ${ms(percentile(latencies, 99))} ms |`,
    '',
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await bench());
}
