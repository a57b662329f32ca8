import { describe, expect, it } from 'vitest';
import type { RagHit } from '../../../src/rag/backend.js';
import { citationFor, citationsFor } from '../../../src/rag/citations.js';
import { formatPassages, passageHeader } from '../../../src/rag/format.js';

function hit(id: string, text: string, metadata: Record<string, unknown> = {}, source = `docs/${id}.md`): RagHit {
  return { id, score: 1, text, source, metadata };
}

describe('citations', () => {
  it('take the title as the source name, with page and section', () => {
    const citation = citationFor(hit('a', 'Some text', { title: 'Handbook', page: 4, section: 'Leave' }), 0);
    expect(citation).toEqual({
      citationId: 'S1',
      sourceName: 'Handbook',
      sourcePath: 'docs/a.md',
      sourceUri: null,
      pageNumber: 4,
      sectionTitle: 'Leave',
      snippet: 'Some text',
    });
  });

  it('fall back to the file name, read a URL source as its URI, and ignore odd pages', () => {
    expect(citationFor(hit('a', 't', { page: 'four' }), 1)).toMatchObject({ citationId: 'S2', sourceName: 'a.md', pageNumber: null });
    expect(citationFor(hit('a', 't', { page: '7' }), 0).pageNumber).toBe(7);
    expect(citationFor(hit('u', 't', {}, 'https://kb.example/x'), 0)).toMatchObject({ sourceName: 'https://kb.example/x', sourceUri: 'https://kb.example/x' });
    expect(citationFor(hit('v', 't', { url: 'https://kb.example/v' }), 0).sourceUri).toBe('https://kb.example/v');
  });

  it('cut long snippets', () => {
    expect(citationFor(hit('a', 'x'.repeat(500)), 0).snippet).toHaveLength(200);
  });
});

describe('formatPassages', () => {
  const hits = [
    hit('a', 'First passage.', { title: 'Handbook', page: 3, section: 'Vacation' }),
    hit('b', 'Second passage.', { section: 'Expenses' }),
    hit('c', '  Third passage.\n'),
  ];
  const citations = citationsFor(hits);

  it('numbers passages with source, page and section, joined by a blank line', () => {
    const formatted = formatPassages(hits, citations, 10_000);
    expect(formatted.output).toBe(
      '[S1] Handbook / p.3 / Vacation\nFirst passage.\n\n[S2] b.md / Expenses\nSecond passage.\n\n[S3] c.md\nThird passage.',
    );
    expect(formatted).toMatchObject({ included: 3, omitted: 0 });
  });

  it('gives an empty output for no hits', () => {
    expect(formatPassages([], [], 100)).toEqual({ output: '', included: 0, omitted: 0 });
  });

  it('drops whole passages from the end and says how many were omitted', () => {
    const longer = [...hits.slice(0, 2), hit('c', `Third passage. ${'z'.repeat(100)}`)];
    const full = formatPassages(longer, citationsFor(longer), 10_000).output;
    const formatted = formatPassages(longer, citationsFor(longer), full.length - 1);
    expect(formatted.included).toBe(2);
    expect(formatted.output).toContain('Second passage.');
    expect(formatted.output).not.toContain('Third');
    expect(formatted.output.endsWith('[1 more passage omitted to fit the result size limit]')).toBe(true);
    expect(formatted.output.length).toBeLessThanOrEqual(full.length - 1);
  });

  it('fits exactly at the limit without dropping anything', () => {
    const full = formatPassages(hits, citations, 10_000).output;
    expect(formatPassages(hits, citations, full.length).output).toBe(full);
  });

  it('cuts the first passage only when not even it fits, and stays within the limit', () => {
    const long = [hit('a', 'y'.repeat(400)), hit('b', 'short')];
    const formatted = formatPassages(long, citationsFor(long), 150);
    expect(formatted.output.length).toBeLessThanOrEqual(150);
    expect(formatted.output.startsWith('[S1] a.md\nyyy')).toBe(true);
    expect(formatted.output).toContain('…');
    expect(formatted.output).toContain('[1 more passage omitted');
    expect(formatted).toMatchObject({ included: 1, omitted: 1 });
  });

  it('writes the header from the citation', () => {
    expect(passageHeader({ citationId: 'S9', sourceName: '', sourcePath: 'p.txt', sourceUri: null, pageNumber: null, sectionTitle: null, snippet: '' })).toBe('[S9] p.txt');
  });
});
