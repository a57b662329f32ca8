import { describe, expect, it } from 'vitest';
import { chunkText } from '../../../src/rag/chunk.js';

const paragraph = (word: string, count: number): string => Array.from({ length: count }, (_, i) => `${word}${i}`).join(' ');

describe('chunkText', () => {
  it('keeps short text as one chunk with whitespace normalised', () => {
    expect(chunkText('Hello   world.\nSecond line.', { maxChars: 200, overlapChars: 20 })).toEqual(['Hello world. Second line.']);
  });

  it('packs whole paragraphs together up to the bound', () => {
    const text = ['alpha one.', 'beta two.', 'gamma three.'].join('\n\n');
    expect(chunkText(text, { maxChars: 200, overlapChars: 0 })).toEqual(['alpha one.\n\nbeta two.\n\ngamma three.']);
  });

  it('starts a new chunk at a paragraph boundary and carries a short overlap', () => {
    const text = [paragraph('a', 20), paragraph('b', 20), paragraph('c', 20)].join('\n\n');
    const chunks = chunkText(text, { maxChars: 160, overlapChars: 30 });
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(160);
    // The second chunk opens with the tail of the first one.
    const tail = chunks[0]!.slice(-10);
    expect(chunks[1]!.includes(tail.split(' ').pop()!)).toBe(true);
    // Nothing is lost: every word of the input appears in some chunk.
    for (const word of text.split(/\s+/)) expect(chunks.some((chunk) => chunk.split(/\s+/).includes(word))).toBe(true);
  });

  it('cuts a paragraph longer than the bound at word boundaries', () => {
    const chunks = chunkText(paragraph('word', 300), { maxChars: 100, overlapChars: 10 });
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(100);
      expect(chunk).toMatch(/^word\d+(\s+word\d+)*$/); // cut between words, never inside one
    }
    expect(chunks.join(' ')).toContain('word299');
  });

  it('cuts a single unbroken token hard rather than looping forever', () => {
    const chunks = chunkText('x'.repeat(250), { maxChars: 64, overlapChars: 8 });
    expect(chunks.join('').replace(/\s/g, '')).toContain('x'.repeat(40));
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(64);
  });

  it('gives no chunks for blank text', () => {
    expect(chunkText('  \n\n  \n', { maxChars: 100, overlapChars: 10 })).toEqual([]);
  });
});
