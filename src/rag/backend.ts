// The one interface every retrieval backend implements (embedded index, HTTP retrieval service).
// Backends only search; binding the filter and formatting the answer belong to the tool (tool.ts).

/** A scalar a filter may compare against document metadata. */
export type FilterScalar = string | number | boolean;

/**
 * A metadata filter: every key must equal the document's metadata value; an array means any-of.
 * A document that lacks a filtered key never matches.
 */
export type RagFilter = Readonly<Record<string, FilterScalar | readonly FilterScalar[]>>;

export interface RagHit {
  id: string;
  score: number;
  text: string;
  /** Where the passage comes from: a file path, URL or document id. */
  source: string;
  metadata: Record<string, unknown>;
}

/** One numbered source the model may cite (`[S1]` ↔ citationId `S1`). */
export interface Citation {
  citationId: string;
  sourceName: string;
  sourcePath: string;
  sourceUri: string | null;
  pageNumber: number | null;
  sectionTitle: string | null;
  snippet: string;
}

export interface RagSearchResult {
  /** Hits as retrieved, best first, already filtered and cut to topK. */
  hits: RagHit[];
  /** Hits after a rerank step, when the backend has one; these are what the model reads. */
  reranked?: RagHit[];
  /** One citation per final hit (reranked when present), in the same order. */
  citations: Citation[];
}

export type RagBackendKind = 'embedded' | 'http';

export interface RagBackendStats {
  kind: RagBackendKind;
  ready: boolean;
  documents?: number;
  chunks?: number;
  buildMs?: number;
  loadedAt?: string;
  searches?: number;
  failures?: number;
  lastError?: string;
}

export interface RagBackend {
  readonly kind: RagBackendKind;
  /** Searches with the filter applied inside the search, so `topK` counts matching documents only. */
  search(query: string, filter: RagFilter, topK: number, signal: AbortSignal): Promise<RagSearchResult>;
  close?(): Promise<void>;
  stats(): RagBackendStats;
}
