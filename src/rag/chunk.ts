// Paragraph-aware chunking: whole paragraphs are packed up to a size bound; a paragraph longer than the
// bound is cut at word boundaries. Consecutive chunks share a short overlap so a sentence that straddles
// a boundary can still be found with its context.

export interface ChunkOptions {
  /** Upper bound of a chunk's length in characters. */
  maxChars: number;
  /** Characters of the previous chunk's tail repeated at the start of the next one. */
  overlapChars: number;
}

export const DEFAULT_CHUNK_OPTIONS: ChunkOptions = Object.freeze({ maxChars: 1200, overlapChars: 150 });

/** Cuts text longer than `max` at the last whitespace before `max` (or hard at `max` when there is none). */
function splitLong(text: string, max: number): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > max) {
    const space = rest.lastIndexOf(' ', max);
    const cut = space > max / 2 ? space : max;
    pieces.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  if (rest.length > 0) pieces.push(rest);
  return pieces;
}

/** The last `chars` characters of a chunk, starting at a word boundary. */
function tailOf(text: string, chars: number): string {
  if (chars <= 0 || text.length <= chars) return chars <= 0 ? '' : text;
  const tail = text.slice(text.length - chars);
  const space = tail.indexOf(' ');
  return space >= 0 ? tail.slice(space + 1) : tail;
}

export function chunkText(text: string, options: ChunkOptions = DEFAULT_CHUNK_OPTIONS): string[] {
  const maxChars = Math.max(32, Math.floor(options.maxChars));
  // The overlap must leave room for new text, or chunking would never advance.
  const overlap = Math.max(0, Math.min(Math.floor(options.overlapChars), Math.floor(maxChars / 4)));
  const separator = '\n\n';
  const paragraphs = text
    .split(/\r?\n\s*\r?\n/)
    .map((paragraph) => paragraph.replace(/\s+/g, ' ').trim())
    .filter((paragraph) => paragraph.length > 0)
    // Leaves room for a carried-over tail plus the separator, so no chunk exceeds maxChars.
    .flatMap((paragraph) => splitLong(paragraph, maxChars - overlap - separator.length));

  const chunks: string[] = [];
  let current = '';
  for (const paragraph of paragraphs) {
    const joined = current ? `${current}${separator}${paragraph}` : paragraph;
    if (joined.length <= maxChars) {
      current = joined;
      continue;
    }
    chunks.push(current);
    const carried = tailOf(current, overlap);
    current = carried ? `${carried}${separator}${paragraph}` : paragraph;
  }
  if (current) chunks.push(current);
  return chunks;
}
