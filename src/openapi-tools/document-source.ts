// Where a document's text comes from: a local file, or a URL fetched through the egress guard (the
// pinned fetch: private addresses refused unless allowlisted, no redirects followed). A fetched
// document is cached with its validators, so a reload asks "changed?" instead of downloading again.
import { open } from 'node:fs/promises';
import { egressRefusalOf, type FetchLike } from '../egress/pinned-fetch.js';
import { readBodyCapped } from '../egress/http-client.js';
import { OpenApiDocumentError } from './parse-document.js';

/** Large enough for GitHub's full description (13 MB JSON), small enough to bound a hostile one. */
const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 30_000;

export interface FetchedDocument {
  text: string;
  etag?: string;
  lastModified?: string;
}

/** Last good answer per URL; outlives providers so reloads can revalidate. */
export type DocumentCache = Map<string, FetchedDocument>;

export async function readDocumentFile(path: string): Promise<string> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw new OpenApiDocumentError(`cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    // Checked on the opened handle, not the path: nothing can swap in a FIFO or device in between.
    const info = await handle.stat();
    if (!info.isFile()) throw new OpenApiDocumentError(`${path} is not a regular file`);
    if (info.size > MAX_DOCUMENT_BYTES) throw new OpenApiDocumentError(`${path} is larger than ${MAX_DOCUMENT_BYTES} bytes`);
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

export async function fetchDocument(url: string, fetch: FetchLike, cache: DocumentCache): Promise<string> {
  const cached = cache.get(url);
  const headers: Record<string, string> = { accept: 'application/json, application/yaml;q=0.9, */*;q=0.1' };
  if (cached?.etag) headers['if-none-match'] = cached.etag;
  if (cached?.lastModified) headers['if-modified-since'] = cached.lastModified;
  let response: Response;
  try {
    response = await fetch(url, { headers, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  } catch (error) {
    // Documents are the operator's configuration: the operator is told why the egress policy refused one.
    const refusal = egressRefusalOf(error);
    const cause = (error as Error).cause as Error | undefined;
    throw new OpenApiDocumentError(`cannot fetch ${url}: ${refusal ? `${refusal.message} (${refusal.reason})` : (cause?.message ?? (error as Error).message)}`);
  }
  if (response.status === 304 && cached) {
    await response.body?.cancel();
    return cached.text;
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new OpenApiDocumentError(`cannot fetch ${url}: HTTP ${response.status}${response.status >= 300 && response.status < 400 ? ' (redirects are not followed; use the final URL)' : ''}`);
  }
  let text: string;
  try {
    text = response.body ? await readBodyCapped(response.body, MAX_DOCUMENT_BYTES) : '';
  } catch (error) {
    throw new OpenApiDocumentError(`cannot fetch ${url}: ${(error as Error).message}`);
  }
  cache.set(url, { text, etag: response.headers.get('etag') ?? undefined, lastModified: response.headers.get('last-modified') ?? undefined });
  return text;
}
