// The `yaml` package builds a document, its tokens and nodes for every text it reads: about 0.2 ms of CPU and a
// few hundred KiB of short-lived objects for one tenant of a few lines. At 100,000 tenants that garbage,
// partly promoted to the old generation, doubled the heap at start and was not returned by the time the
// gateway was ready (bench/results.md, issue 46). Most tenants are written in a small, plain part of YAML
// (block mappings and sequences of plain words and integers): that part is read here, line by line, and
// anything else (comments after a value, quotes, flow collections, anchors, tags, multi-line scalars, a
// word YAML may read as null or a boolean, a duplicated key) is left to the `yaml` package, which then
// reads the whole text (and names its errors).

/** A line's indentation and what follows it. */
interface Line {
  readonly indent: number;
  readonly content: string;
}

const KEY = /^([A-Za-z_][A-Za-z0-9_.-]*):(?: (.*))?$/;
// Plain words: no indicator, quote, `#` or `:` anywhere, so nothing but a string in any YAML schema.
const WORD = /^[A-Za-z_][A-Za-z0-9_.*/-]*(?: [A-Za-z0-9_.*/-]+)*$/;
const INTEGER = /^(?:0|-?[1-9][0-9]{0,14})$/;
// Words the core schema reads as null or a boolean (in some spelling): left to the real parser.
const RESOLVED = /^(?:null|true|false|y|n|yes|no|on|off)$/i;
const SPACE = 32;

/** What the reader answers, at any depth, for a text it does not vouch for. */
const NOT_PLAIN: unique symbol = Symbol('not plain YAML');
type Read<T> = T | typeof NOT_PLAIN;

function linesOf(text: string): Read<Line[]> {
  const lines: Line[] = [];
  for (const raw of text.split('\n')) {
    let indent = 0;
    while (raw.charCodeAt(indent) === SPACE) indent += 1;
    const content = raw.slice(indent);
    if (content === '' || content.startsWith('#')) continue;
    // Tabs, carriage returns and trailing spaces are where YAML's rules get subtle.
    if (content.includes('\t') || content.includes('\r') || content.endsWith(' ')) return NOT_PLAIN;
    lines.push({ indent, content });
  }
  return lines;
}

function scalar(text: string): Read<unknown> {
  if (text === '{}') return {};
  if (text === '[]') return [];
  if (INTEGER.test(text)) return Number(text);
  if (WORD.test(text) && !RESOLVED.test(text)) return text;
  return NOT_PLAIN;
}

/** Reads the block whose lines start at `lines[at]` with that line's indentation; returns it and the next line. */
function block(lines: readonly Line[], at: number): Read<{ value: unknown; next: number }> {
  const indent = lines[at]!.indent;
  let index = at;
  if (lines[at]!.content.startsWith('- ')) {
    const items: unknown[] = [];
    for (; index < lines.length && lines[index]!.indent === indent; index += 1) {
      const { content } = lines[index]!;
      const item = content.startsWith('- ') ? scalar(content.slice(2)) : NOT_PLAIN;
      if (item === NOT_PLAIN) return NOT_PLAIN;
      items.push(item);
    }
    return { value: items, next: index };
  }
  const mapping: Record<string, unknown> = {};
  while (index < lines.length && lines[index]!.indent === indent) {
    const match = KEY.exec(lines[index]!.content);
    const key = match?.[1];
    if (!match || key === undefined || RESOLVED.test(key) || key === '__proto__' || Object.hasOwn(mapping, key)) return NOT_PLAIN;
    index += 1;
    const below = lines[index];
    let value: Read<unknown> = null;
    if (match[2] !== undefined) value = scalar(match[2]);
    else if (below && below.indent > indent) {
      const inner = block(lines, index);
      if (inner === NOT_PLAIN) return NOT_PLAIN;
      ({ value, next: index } = inner);
    }
    // A sequence at its key's own indentation is YAML too, but not read here.
    else if (below && below.indent === indent && below.content.startsWith('-')) value = NOT_PLAIN;
    if (value === NOT_PLAIN) return NOT_PLAIN;
    mapping[key] = value;
  }
  return { value: mapping, next: index };
}

/**
 * The value of `text` when it is written in the plain block part of YAML described above, as the `yaml`
 * package's `parse` would give it; undefined when it is not (the caller then parses it with the package).
 */
export function readPlainYaml(text: string): { value: unknown } | undefined {
  const lines = linesOf(text);
  if (lines === NOT_PLAIN || lines.length === 0 || lines[0]!.indent !== 0) return undefined;
  const read = block(lines, 0);
  // A line left over is indented where no block is (a multi-line scalar, or an error): not plain.
  return read !== NOT_PLAIN && read.next === lines.length ? { value: read.value } : undefined;
}
