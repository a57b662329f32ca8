// The text the model reads: numbered passages `[S1] <source>[ / p.<page>][ / <section>]` + passage text,
// joined by a blank line and fitted within the tool's maxResultChars.
import type { Citation, RagHit } from './backend.js';

export interface FormattedPassages {
  output: string;
  /** How many passages (from the front) the output holds; their citations are the ones to report. */
  included: number;
  omitted: number;
}

export function passageHeader(citation: Citation): string {
  let header = `[${citation.citationId}] ${citation.sourceName || citation.sourcePath}`;
  if (citation.pageNumber !== null) header += ` / p.${citation.pageNumber}`;
  if (citation.sectionTitle !== null) header += ` / ${citation.sectionTitle}`;
  return header;
}

function omittedNote(count: number): string {
  return `[${count} more passage${count === 1 ? '' : 's'} omitted to fit the result size limit]`;
}

/**
 * Whole passages are dropped from the end (never cut in the middle) until the rest plus a note saying how
 * many were left out fits `maxChars`. Only when not even the first passage fits is it cut, so the model
 * still gets the best hit.
 */
export function formatPassages(hits: readonly RagHit[], citations: readonly Citation[], maxChars: number): FormattedPassages {
  const blocks = hits.map((hit, index) => `${passageHeader(citations[index]!)}\n${hit.text.trim()}`);
  if (blocks.length === 0) return { output: '', included: 0, omitted: 0 };

  for (let count = blocks.length; count > 0; count -= 1) {
    const omitted = blocks.length - count;
    const parts = blocks.slice(0, count);
    if (omitted > 0) parts.push(omittedNote(omitted));
    const output = parts.join('\n\n');
    if (output.length <= maxChars) return { output, included: count, omitted };
  }

  const omitted = blocks.length - 1;
  const note = omitted > 0 ? `\n\n${omittedNote(omitted)}` : '';
  const room = Math.max(0, maxChars - note.length - 1);
  const output = `${blocks[0]!.slice(0, room)}…${note}`.slice(0, maxChars);
  return { output, included: 1, omitted };
}
