// The default backend: an in-process full-text index (minisearch) over chunked documents. The metadata
// filter runs inside minisearch's search, so topK counts only documents the caller may see.
import MiniSearch, { type SearchOptions } from 'minisearch';
import { ToolError } from '../call/tool-error.js';
import type { RagBackend, RagBackendStats, RagFilter, RagHit, RagSearchResult } from './backend.js';
import { chunkText, DEFAULT_CHUNK_OPTIONS, type ChunkOptions } from './chunk.js';
import { citationsFor } from './citations.js';
import { matchesFilter } from './filter.js';
import { loadDocuments, type RagDocument } from './load-documents.js';

interface IndexedChunk {
  id: string;
  text: string;
  title: string;
  section: string;
  source: string;
  metadata: Readonly<Record<string, unknown>>;
}

interface EmbeddedIndex {
  search: MiniSearch<IndexedChunk>;
  chunks: ReadonlyMap<string, IndexedChunk>;
  documents: number;
  buildMs: number;
  loadedAt: string;
}

export interface EmbeddedBackendOptions {
  /** A .jsonl file or folder of .md/.txt files, or documents already in memory (tests, benchmarks). */
  documents: string | readonly RagDocument[];
  chunk?: ChunkOptions;
}

export interface EmbeddedBackend extends RagBackend {
  /** Builds the index (at start-up and on reload); the old index keeps serving until the new one is ready. */
  load(): Promise<void>;
}

// Prefix matching for longer terms and light fuzziness for long ones: forgiving without flooding results.
const SEARCH_OPTIONS: SearchOptions = {
  combineWith: 'OR',
  prefix: (term) => term.length > 3,
  fuzzy: (term) => (term.length > 5 ? 0.2 : false),
  boost: { title: 2, section: 1.5 },
};

function label(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

// Metadata is shared by every hit on the chunk, so it is frozen once here rather than copied per call.
function frozenMetadata(metadata: Record<string, unknown>): Readonly<Record<string, unknown>> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(metadata)) {
    const value = metadata[key];
    Object.defineProperty(copy, key, { value: Array.isArray(value) ? Object.freeze([...value]) : value, enumerable: true });
  }
  return Object.freeze(copy);
}

function buildIndex(documents: readonly RagDocument[], chunkOptions: ChunkOptions = DEFAULT_CHUNK_OPTIONS): EmbeddedIndex {
  const started = performance.now();
  const chunks = new Map<string, IndexedChunk>();
  for (const document of documents) {
    const metadata = frozenMetadata(document.metadata);
    const pieces = chunkText(document.text, chunkOptions);
    pieces.forEach((text, index) => {
      const id = pieces.length === 1 ? document.id : `${document.id}#${index + 1}`;
      if (chunks.has(id)) throw new Error(`duplicate document id "${id}" in the knowledge base`);
      chunks.set(id, { id, text, title: label(metadata.title), section: label(metadata.section), source: document.source, metadata });
    });
  }
  const search = new MiniSearch<IndexedChunk>({ fields: ['text', 'title', 'section'], storeFields: [] });
  search.addAll([...chunks.values()]);
  return { search, chunks, documents: documents.length, buildMs: performance.now() - started, loadedAt: new Date().toISOString() };
}

export function createEmbeddedBackend(options: EmbeddedBackendOptions): EmbeddedBackend {
  let index: EmbeddedIndex | undefined;
  let searches = 0;
  let lastError: string | undefined;

  return {
    kind: 'embedded',
    async load() {
      try {
        const documents = typeof options.documents === 'string' ? await loadDocuments(options.documents) : options.documents;
        index = buildIndex(documents, options.chunk);
        lastError = undefined;
      } catch (error) {
        lastError = (error as Error).message;
        throw error;
      }
    },
    async search(query: string, filter: RagFilter, topK: number, signal: AbortSignal): Promise<RagSearchResult> {
      signal.throwIfAborted();
      const current = index; // one snapshot per call, so a reload mid-call cannot mix two indexes
      if (!current) throw new ToolError('UPSTREAM_ERROR', 'the knowledge index is not loaded');
      searches += 1;
      const results = current.search.search(query, {
        ...SEARCH_OPTIONS,
        filter: (result) => {
          const chunk = current.chunks.get(String(result.id));
          return chunk !== undefined && matchesFilter(chunk.metadata, filter);
        },
      });
      const hits: RagHit[] = results.slice(0, topK).map((result) => {
        const chunk = current.chunks.get(String(result.id))!;
        return { id: chunk.id, score: result.score, text: chunk.text, source: chunk.source, metadata: chunk.metadata as Record<string, unknown> };
      });
      return { hits, citations: citationsFor(hits) };
    },
    stats(): RagBackendStats {
      return {
        kind: 'embedded',
        ready: index !== undefined,
        ...(index ? { documents: index.documents, chunks: index.chunks.size, buildMs: Math.round(index.buildMs), loadedAt: index.loadedAt } : {}),
        searches,
        ...(lastError ? { lastError } : {}),
      };
    },
  };
}
