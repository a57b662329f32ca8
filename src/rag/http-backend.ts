// A remote retrieval service. toolgate POSTs `{query, filter, topK, dataset?}` as JSON and expects:
//
//   200 {"hits": [{"id": "doc-1#2", "score": 3.1, "text": "...", "source": "handbook.md",
//                  "metadata": {"tenant": "acme", "page": 4}}],
//        "reranked": [ ...same shape, optional... ]}
//
// `id` (string or number) and `text` are required per hit; `score` defaults to 0, `source` to the id and
// `metadata` to {}. The service is trusted to apply `filter`; retries belong to the policy stack.
import type { Dispatcher } from 'undici';
import { ToolError } from '../call/tool-error.js';
import { readBodyCapped } from '../egress/http-client.js';
import { clientSpan, httpClientAttributes, isTracing } from '../observability/tracing.js';
import type { RagBackend, RagFilter, RagHit, RagSearchResult } from './backend.js';
import { citationsFor } from './citations.js';

export interface HttpBackendOptions {
  url: string;
  /** Static headers from config (secrets already resolved); the caller's own headers are never forwarded. */
  headers: Record<string, string>;
  timeoutMs: number;
  dataset?: string;
  /** The gateway's shared undici pool (owned and closed by the gateway). */
  dispatcher: Dispatcher;
  maxResponseBytes?: number;
}

const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
const FIXED_HEADERS = { 'content-type': 'application/json', accept: 'application/json' } as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function upstream(message: string, cause?: unknown): ToolError {
  return new ToolError('UPSTREAM_ERROR', `retrieval service ${message}`, { cause });
}

function toHit(value: unknown, where: string): RagHit {
  if (!isRecord(value)) throw upstream(`answered ${where} that is not an object`);
  const { id, score, text, source, metadata } = value;
  if (typeof id !== 'string' && typeof id !== 'number') throw upstream(`answered ${where} without an id`);
  if (typeof text !== 'string') throw upstream(`answered ${where} without text`);
  if (score !== undefined && (typeof score !== 'number' || !Number.isFinite(score))) throw upstream(`answered ${where} with a non-numeric score`);
  if (metadata !== undefined && !isRecord(metadata)) throw upstream(`answered ${where} with metadata that is not an object`);
  return { id: String(id), score: score ?? 0, text, source: typeof source === 'string' ? source : String(id), metadata: metadata ?? {} };
}

function toHits(value: unknown, field: string, topK: number): RagHit[] {
  if (!Array.isArray(value)) throw upstream(`answered without a "${field}" array`);
  // The service may ignore topK; the model never reads more than it asked for.
  return value.slice(0, topK).map((hit, index) => toHit(hit, `${field}[${index}]`));
}

function configHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!Object.hasOwn(FIXED_HEADERS, name.toLowerCase())) out[name] = value;
  }
  return { ...out, ...FIXED_HEADERS };
}

export function createHttpBackend(options: HttpBackendOptions): RagBackend {
  const headers = configHeaders(options.headers);
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  let searches = 0;
  let failures = 0;
  let lastError: string | undefined;

  const hop = httpClientAttributes('POST', new URL(options.url));

  // A client span only while tracing is on; its traceparent goes with the request.
  function post(query: string, filter: RagFilter, topK: number, signal: AbortSignal): Promise<unknown> {
    if (!isTracing()) return send(query, filter, topK, signal, headers);
    return clientSpan('POST', hop, (trace) => send(query, filter, topK, signal, { ...headers, ...trace }));
  }

  async function send(query: string, filter: RagFilter, topK: number, signal: AbortSignal, headers: Record<string, string>): Promise<unknown> {
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const payload = { query, filter, topK, ...(options.dataset !== undefined ? { dataset: options.dataset } : {}) };
    try {
      const url = new URL(options.url);
      const response = await options.dispatcher.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers,
        body: JSON.stringify(payload),
        signal: AbortSignal.any([signal, timeout]),
      });
      if (response.statusCode < 200 || response.statusCode > 299) {
        await response.body.dump();
        throw upstream(`answered HTTP ${response.statusCode}`);
      }
      let raw: string;
      try {
        raw = await readBodyCapped(response.body, maxBytes);
      } catch (error) {
        if (signal.aborted || timeout.aborted) throw error;
        throw upstream(`answer could not be read (${(error as Error).message})`, error);
      }
      try {
        return JSON.parse(raw) as unknown;
      } catch (error) {
        throw upstream('answered with a body that is not JSON', error);
      }
    } catch (error) {
      // The caller's signal carries its own reason (timeout policy, cancellation, shutdown): pass it on as is.
      if (signal.aborted) throw signal.reason;
      if (timeout.aborted) throw new ToolError('TIMEOUT', `retrieval service did not answer within ${options.timeoutMs} ms`, { cause: error });
      if (error instanceof ToolError) throw error;
      throw upstream(`unreachable (${(error as Error).message})`, error);
    }
  }

  return {
    kind: 'http',
    async search(query, filter, topK, signal): Promise<RagSearchResult> {
      searches += 1;
      try {
        const answer = await post(query, filter, topK, signal);
        if (!isRecord(answer)) throw upstream('answered JSON that is not an object');
        const hits = toHits(answer.hits, 'hits', topK);
        const reranked = answer.reranked === undefined ? undefined : toHits(answer.reranked, 'reranked', topK);
        return { hits, ...(reranked ? { reranked } : {}), citations: citationsFor(reranked ?? hits) };
      } catch (error) {
        failures += 1;
        lastError = (error as Error)?.message ?? String(error);
        throw error;
      }
    },
    stats() {
      return { kind: 'http', ready: true, searches, failures, ...(lastError ? { lastError } : {}) };
    },
  };
}
