import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ToolError } from '../../../src/call/tool-error.js';
import { createEmbeddedBackend } from '../../../src/rag/embedded-backend.js';
import type { RagDocument } from '../../../src/rag/load-documents.js';
import { QUERIES, TWO_TENANT_DOCS } from './fixtures.js';

const signal = new AbortController().signal;

async function loaded(documents: readonly RagDocument[]) {
  const backend = createEmbeddedBackend({ documents });
  await backend.load();
  return backend;
}

describe('embedded backend', () => {
  it('returns only the filtered tenant’s documents for every query, although both tenants share words', async () => {
    const backend = await loaded(TWO_TENANT_DOCS);
    for (const tenant of ['acme', 'globex']) {
      for (const query of QUERIES) {
        const { hits, citations } = await backend.search(query, { tenant }, 20, signal);
        for (const hit of hits) expect(hit.metadata.tenant).toBe(tenant);
        expect(citations).toHaveLength(hits.length);
      }
    }
    // The shared words do match in both tenants, so the isolation above is not vacuous.
    expect((await backend.search('vacation', { tenant: 'acme' }, 20, signal)).hits.length).toBeGreaterThan(0);
    expect((await backend.search('vacation', { tenant: 'globex' }, 20, signal)).hits.length).toBeGreaterThan(0);
  });

  it('narrows by department and never matches documents that lack the filtered key', async () => {
    const backend = await loaded(TWO_TENANT_DOCS);
    const { hits } = await backend.search('vacation', { tenant: 'acme', department: 'hr' }, 20, signal);
    expect(hits.map((hit) => hit.id)).toEqual(['acme-vacation']);
    // acme-office mentions vacation but has no department: never returned under a department filter.
    const all = await backend.search('vacation', { tenant: 'acme', department: ['hr', 'engineering'] }, 20, signal);
    expect(all.hits.map((hit) => hit.id).sort()).toEqual(['acme-oncall', 'acme-vacation']);
  });

  it('applies the filter inside the search, so topK counts only visible documents', async () => {
    // 30 globex documents outscore the single acme one; filtering after truncation would leave acme empty.
    const documents: RagDocument[] = Array.from({ length: 30 }, (_, i) => ({
      id: `g${i}`,
      text: 'vacation vacation vacation policy',
      source: `g${i}.md`,
      metadata: { tenant: 'globex' },
    }));
    documents.push({ id: 'a0', text: 'Long text that mentions vacation once among many other words here.', source: 'a0.md', metadata: { tenant: 'acme' } });
    const backend = await loaded(documents);
    const { hits } = await backend.search('vacation', { tenant: 'acme' }, 1, signal);
    expect(hits.map((hit) => hit.id)).toEqual(['a0']);
  });

  it('returns at most topK hits, best first', async () => {
    const backend = await loaded(TWO_TENANT_DOCS);
    const { hits } = await backend.search('vacation policy', { tenant: 'globex' }, 2, signal);
    expect(hits).toHaveLength(2);
    expect(hits[0]!.score).toBeGreaterThanOrEqual(hits[1]!.score);
  });

  it('refuses to search before the index is loaded', async () => {
    const backend = createEmbeddedBackend({ documents: TWO_TENANT_DOCS });
    await expect(backend.search('x', { tenant: 'acme' }, 1, signal)).rejects.toMatchObject({ errorType: 'UPSTREAM_ERROR' });
    expect(backend.stats()).toMatchObject({ kind: 'embedded', ready: false });
  });

  it('stops when the call is already aborted', async () => {
    const backend = await loaded(TWO_TENANT_DOCS);
    const controller = new AbortController();
    controller.abort(new ToolError('TIMEOUT', 'late'));
    await expect(backend.search('vacation', { tenant: 'acme' }, 5, controller.signal)).rejects.toMatchObject({ errorType: 'TIMEOUT' });
  });

  it('chunks long documents and keeps their metadata on every chunk', async () => {
    const text = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} about vacation rules number ${i}.`).join('\n\n');
    const backend = createEmbeddedBackend({ documents: [{ id: 'long', text, source: 'long.md', metadata: { tenant: 'acme' } }], chunk: { maxChars: 300, overlapChars: 40 } });
    await backend.load();
    expect(backend.stats().chunks).toBeGreaterThan(1);
    const { hits } = await backend.search('vacation', { tenant: 'acme' }, 50, signal);
    expect(hits.length).toBe(backend.stats().chunks);
    for (const hit of hits) {
      expect(hit.id).toMatch(/^long#\d+$/);
      expect(hit.metadata).toEqual({ tenant: 'acme' });
    }
  });

  describe('from a file', () => {
    let dir: string;
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('rebuilds on reload and keeps the old index when the new file is broken', async () => {
      dir = await mkdtemp(join(tmpdir(), 'toolgate-rag-'));
      const file = join(dir, 'kb.jsonl');
      await writeFile(file, '{"id":"one","text":"alpha","tenant":"acme"}\n');
      const backend = createEmbeddedBackend({ documents: file });
      await backend.load();
      expect((await backend.search('alpha', { tenant: 'acme' }, 5, signal)).hits.map((hit) => hit.id)).toEqual(['one']);

      await writeFile(file, '{"id":"two","text":"beta","tenant":"acme"}\n');
      await backend.load();
      expect((await backend.search('alpha', { tenant: 'acme' }, 5, signal)).hits).toEqual([]);
      expect((await backend.search('beta', { tenant: 'acme' }, 5, signal)).hits.map((hit) => hit.id)).toEqual(['two']);

      await writeFile(file, '{broken\n');
      await expect(backend.load()).rejects.toThrow(/kb\.jsonl:1/);
      expect((await backend.search('beta', { tenant: 'acme' }, 5, signal)).hits.map((hit) => hit.id)).toEqual(['two']);
      expect(backend.stats()).toMatchObject({ ready: true, lastError: expect.stringContaining('kb.jsonl:1') });
    });

    it('refuses duplicate document ids', async () => {
      const backend = createEmbeddedBackend({
        documents: [
          { id: 'd', text: 'a', source: 'a', metadata: {} },
          { id: 'd', text: 'b', source: 'b', metadata: {} },
        ],
      });
      await expect(backend.load()).rejects.toThrow(/duplicate document id "d"/);
    });
  });
});
