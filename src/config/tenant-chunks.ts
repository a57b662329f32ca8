// A configuration file of thousands of tenants is mostly its `tenants:` block, and parsing it whole is what a
// reload of one changed tenant would pay (seconds at 20,000 tenants, docs/configuration.md#tenants). Cut
// along the lines of a plain block mapping, each tenant's text is parsed on its own, and only when it is new.
// Whatever this cut cannot vouch for (a flow mapping, tabs, several documents, a directive) is left to the
// whole-file parse, and so is any chunk that does not parse on its own (an alias to another tenant's anchor).

/** A file cut in two: its text without the tenants, and each tenant's entry as it stands in the file. */
export interface TenantChunks {
  /** The file with the tenants' lines taken out (the `tenants:` line itself kept). */
  readonly head: string;
  /** Each entry of `tenants`, in file order: its key line and the lines under it, still indented. */
  readonly chunks: readonly string[];
  /** The indentation of the entries' key lines. */
  readonly indent: number;
}

const TENANTS_LINE = /^tenants:[ \t]*(?:#.*)?\r?$/gm;
// A document marker or directive at column 0 (`---`, `...`, `%YAML`) ends or starts a document; a tab may indent.
const UNCUT = /^(?:---|\.\.\.|%|[ ]*\t)/m;
const SPACE = 32;

/**
 * The file's tenants cut out one by one, when its `tenants` is a block mapping at the top level whose entries
 * all start at one indentation; undefined otherwise (the caller parses the whole file). Scans the text once
 * without splitting it: at 100,000 tenants a line array was most of a reload's garbage.
 */
export function splitTenantChunks(text: string): TenantChunks | undefined {
  if (UNCUT.test(text)) return undefined;
  const found = [...text.matchAll(TENANTS_LINE)];
  if (found.length !== 1) return undefined;
  const headEnd = text.indexOf('\n', found[0]!.index) + 1;
  if (headEnd === 0) return undefined;
  const chunks: string[] = [];
  let indent = 0;
  let chunkStart = -1;
  let end = text.length;
  for (let lineStart = headEnd; lineStart < text.length; ) {
    const next = text.indexOf('\n', lineStart);
    const lineEnd = next === -1 ? text.length : next + 1;
    let at = lineStart;
    while (text.charCodeAt(at) === SPACE) at += 1;
    const first = text[at];
    // Blank and comment lines go with the entry they follow (those before the first entry with none).
    if (at < lineEnd && first !== '\n' && first !== '\r' && first !== '#' && at !== text.length) {
      const column = at - lineStart;
      if (column === 0) {
        end = lineStart;
        break;
      }
      if (indent === 0) indent = column;
      if (column < indent) return undefined;
      if (column === indent) {
        // A sequence or flow collection here is not a mapping of tenants: the whole file's parse names the error.
        if (first === '-' || first === '{' || first === '[') return undefined;
        if (chunkStart !== -1) chunks.push(text.slice(chunkStart, lineStart));
        chunkStart = lineStart;
      }
    }
    lineStart = lineEnd;
  }
  if (chunkStart !== -1) chunks.push(text.slice(chunkStart, end));
  // Comments and blank lines after the last entry went into it; the lines from `end` on are the head's again.
  return { head: text.slice(0, headEnd) + text.slice(end), chunks, indent };
}

/** An entry's text moved to column 0, to be parsed on its own. */
export function dedent(chunk: string, indent: number): string {
  return chunk
    .split('\n')
    .map((line) => line.slice(Math.min(indent, line.length - line.trimStart().length)))
    .join('\n');
}
