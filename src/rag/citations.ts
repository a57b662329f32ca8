// Citations: the structured twin of the `[Sn]` headers the model reads (docs/architecture.md#rag-tools).
import { posix } from 'node:path';
import type { Citation, RagHit } from './backend.js';

const SNIPPET_CHARS = 200;

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim().length > 0 ? value.trim() : null;
}

function page(value: unknown): number | null {
  const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isInteger(number) && number > 0 ? number : null;
}

function isUrl(value: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(value);
}

function snippetOf(passage: string): string {
  const flat = passage.replace(/\s+/g, ' ').trim();
  return flat.length <= SNIPPET_CHARS ? flat : `${flat.slice(0, SNIPPET_CHARS - 1)}…`;
}

export function citationFor(hit: RagHit, index: number): Citation {
  const meta = hit.metadata;
  const sourcePath = hit.source || hit.id;
  const sourceUri = text(meta.uri) ?? text(meta.url) ?? (isUrl(sourcePath) ? sourcePath : null);
  return {
    citationId: `S${index + 1}`,
    sourceName: text(meta.title) ?? (isUrl(sourcePath) ? sourcePath : posix.basename(sourcePath)),
    sourcePath,
    sourceUri,
    pageNumber: page(meta.page),
    sectionTitle: text(meta.section),
    snippet: snippetOf(hit.text),
  };
}

export function citationsFor(hits: readonly RagHit[]): Citation[] {
  return hits.map(citationFor);
}
