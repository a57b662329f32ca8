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
// A document marker or directive at column 0 (`---`, `...`, `%YAML`) ends or starts a document.
const DOCUMENT_LINE = /^(?:---|\.\.\.|%)/m;
const SPACE = 32;

/** The column of the first line from `from` on that holds more than spaces and a comment, and where it starts. */
function firstContentLine(text: string, from: number): { start: number; column: number } | undefined {
  for (let start = from; start < text.length; ) {
    let at = start;
    while (text.charCodeAt(at) === SPACE) at += 1;
    const first = text[at];
    if (first !== undefined && first !== '\n' && first !== '\r' && first !== '#') return { start, column: at - start };
    const next = text.indexOf('\n', at);
    if (next === -1) return undefined;
    start = next + 1;
  }
  return undefined;
}

/**
 * The file's tenants cut out one by one, when its `tenants` is a block mapping at the top level whose entries
 * all start at one indentation; undefined otherwise (the caller parses the whole file). Only the lines
 * indented no deeper than the entries are looked at, found by one regular expression: at 100,000 tenants a
 * line-by-line scan (or a line array) was most of a reload's cost.
 */
export function splitTenantChunks(text: string): TenantChunks | undefined {
  if (DOCUMENT_LINE.test(text)) return undefined;
  const found = [...text.matchAll(TENANTS_LINE)];
  if (found.length !== 1) return undefined;
  const headEnd = text.indexOf('\n', found[0]!.index) + 1;
  if (headEnd === 0) return undefined;
  const first = firstContentLine(text, headEnd);
  if (!first || first.column === 0) return undefined;
  const indent = first.column;
  const chunks: string[] = [];
  let chunkStart = first.start;
  let end = text.length;
  // A line that starts no deeper than the entries with something other than a space, a line break or a comment.
  const shallow = new RegExp(`\\n {0,${indent}}(?=[^ \\r\\n#])`, 'g');
  shallow.lastIndex = first.start;
  for (let match = shallow.exec(text); match; match = shallow.exec(text)) {
    const lineStart = match.index + 1;
    const column = match[0].length - 1;
    const lead = text[lineStart + column];
    if (column === 0) {
      end = lineStart;
      break;
    }
    // Tabs may not indent; a sequence or flow collection here is not a mapping of tenants (the whole-file parse names the error).
    if (column < indent || lead === '\t' || lead === '-' || lead === '{' || lead === '[') return undefined;
    chunks.push(text.slice(chunkStart, lineStart));
    chunkStart = lineStart;
  }
  const firstLead = text[first.start + indent];
  if (firstLead === '\t' || firstLead === '-' || firstLead === '{' || firstLead === '[') return undefined;
  // Comments and blank lines after the last entry went into it; the lines from `end` on are the head's again.
  chunks.push(text.slice(chunkStart, end));
  // A copy of its own: a slice would keep the whole file's text alive through every string parsed from it.
  const head = Buffer.from(text.slice(0, headEnd) + text.slice(end), 'utf8').toString('utf8');
  return { head, chunks, indent };
}

/** An entry's text moved to column 0, to be parsed on its own. */
export function dedent(chunk: string, indent: number): string {
  return chunk
    .split('\n')
    .map((line) => line.slice(Math.min(indent, line.length - line.trimStart().length)))
    .join('\n');
}
