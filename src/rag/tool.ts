// One config `rag` entry → one tool. The model sees `{query, topK?}` only; the filter arrives in
// `args.filter`, merged by the bind-arguments policy from the entry's template after validation.
import type { RagEntry } from '../config/types.js';
import { DEFAULT_MAX_RESULT_CHARS, defineTool } from '../registry/define-tool.js';
import type { JsonObject, Tool, ToolContext, ToolOutput } from '../call/types.js';
import type { Citation, RagBackend, RagBackendKind, RagFilter, RagHit } from './backend.js';
import { requireBoundFilter } from './filter.js';
import { formatPassages } from './format.js';

/** Longest query the model may send; long enough for any question, short enough to bound index work. */
const MAX_QUERY_CHARS = 2000;

// What the model reads instead of an empty string, which it cannot tell from a broken tool. The same
// words whatever the reason (nothing indexed, nothing this caller may see): they reveal nothing.
const NO_MATCH_OUTPUT = 'No passages in the knowledge base match this query.';
const EMPTY_QUERY_OUTPUT = 'The query is empty: say what to look for in the knowledge base.';

export interface RagHitSummary {
  id: string;
  score: number;
  source: string;
  metadata: Record<string, unknown>;
}

/** What travels beside the output (never shown to the model). Built per call. */
export interface RagTrace {
  retrievedHits: RagHitSummary[];
  rerankedHits?: RagHitSummary[];
  /** Citations of the passages the output holds, numbered as in the output. */
  citations: Citation[];
  filter: RagFilter;
  dataset: string | null;
  backend: RagBackendKind;
  topK: number;
  tookMs: number;
}

export interface RagToolDeps {
  /** Milliseconds clock for `tookMs`; injectable for tests. */
  now?: () => number;
}

function ragInputSchema(entry: RagEntry): JsonObject {
  return {
    type: 'object',
    properties: {
      query: { type: 'string', maxLength: MAX_QUERY_CHARS, description: 'What to look for in the knowledge base, in natural language or keywords.' },
      topK: {
        type: 'integer',
        minimum: 1,
        maximum: entry.topK.max,
        description: `How many passages to return (default ${entry.topK.default}, at most ${entry.topK.max}).`,
      },
    },
    required: ['query'],
    additionalProperties: false,
  };
}

function summarise(hit: RagHit): RagHitSummary {
  return { id: hit.id, score: hit.score, source: hit.source, metadata: { ...hit.metadata } };
}

function topKOf(value: unknown, entry: RagEntry): number {
  // The schema already bounds topK; clamping again keeps the cap even if a tool is called without validation.
  const wanted = typeof value === 'number' && Number.isInteger(value) ? value : entry.topK.default;
  return Math.min(Math.max(wanted, 1), entry.topK.max);
}

export function createRagTool(entry: RagEntry, backend: RagBackend, deps: RagToolDeps = {}): Tool {
  const now = deps.now ?? (() => performance.now());
  const requiredKeys = Object.freeze(Object.keys(entry.filter));
  const maxResultChars = entry.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS;
  const dataset = entry.dataset ?? null;

  async function handler(args: JsonObject, ctx: ToolContext): Promise<ToolOutput> {
    // Checked first, even for an empty query: a call without a bound filter never runs at all.
    const filter = requireBoundFilter(args.filter, requiredKeys);
    const query = typeof args.query === 'string' ? args.query.trim() : '';
    const topK = topKOf(args.topK, entry);
    const traceBase = { filter, dataset, backend: backend.kind, topK };
    if (query.length === 0) {
      const trace: RagTrace = { retrievedHits: [], citations: [], ...traceBase, tookMs: 0 };
      return { output: EMPTY_QUERY_OUTPUT, trace };
    }

    const started = now();
    const result = await backend.search(query, filter, topK, ctx.signal);
    const finalHits = result.reranked ?? result.hits;
    const formatted = formatPassages(finalHits, result.citations, maxResultChars);
    const trace: RagTrace = {
      retrievedHits: result.hits.map(summarise),
      ...(result.reranked ? { rerankedHits: result.reranked.map(summarise) } : {}),
      citations: result.citations.slice(0, formatted.included),
      ...traceBase,
      tookMs: Math.round((now() - started) * 10) / 10,
    };
    return { output: formatted.included === 0 ? NO_MATCH_OUTPUT : formatted.output, trace };
  }

  return defineTool({
    name: entry.name,
    description: entry.description,
    inputSchema: ragInputSchema(entry),
    handler,
    source: 'rag',
    service: `rag:${entry.name}`,
    readOnly: true,
    idempotent: true,
    isConcurrencySafe: () => true,
    maxResultChars,
    bindings: { filter: entry.filter },
    searchHint: 'knowledge base search',
  });
}
