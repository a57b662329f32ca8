// Small linear-time text helpers shared by the built-in detectors: character classes as lookup tables,
// runs of a class, word boundaries, and a keyword finder. The V8 regexes that read outside text here and in
// the detectors are alternations of escaped literals (the keyword finder) or of character classes repeated
// a fixed number of times (a number's or an IBAN's start, hidden characters): no open-ended quantifier, no
// repeated group, so even a backtracking engine tries each alternative once per position, each over a few
// characters at most — linear in the text, the alternatives' total length as the constant
// (test/unit/guardrails/detectors.test.ts checks their sources). Everything else is a forward read by hand.

/** A character class over ASCII as a 128-entry table; characters past ASCII are never in it. */
export type CharClass = Uint8Array;

export function charClass(ranges: string): CharClass {
  const table = new Uint8Array(128);
  for (let i = 0; i < ranges.length; i += 1) {
    if (ranges[i + 1] === '-' && i + 2 < ranges.length) {
      for (let c = ranges.charCodeAt(i); c <= ranges.charCodeAt(i + 2); c += 1) table[c] = 1;
      i += 2;
    } else table[ranges.charCodeAt(i)] = 1;
  }
  return table;
}

export const inClass = (table: CharClass, code: number): boolean => code < 128 && table[code] === 1;

export const ALNUM = charClass('A-Za-z0-9');

/** How many characters of `table` follow `from`, at most `max`. */
export function runOf(text: string, from: number, table: CharClass, max: number): number {
  let n = 0;
  while (n < max && from + n < text.length && inClass(table, text.charCodeAt(from + n))) n += 1;
  return n;
}

/** Whether the character before `index` ends a word (start of text, or not a letter, digit or `_`). */
export function boundaryBefore(text: string, index: number): boolean {
  if (index === 0) return true;
  const c = text.charCodeAt(index - 1);
  return !inClass(ALNUM, c) && c !== 95;
}

const escapeLiteral = (literal: string) => literal.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');

/** The keyword finder's regex source: the escaped literals, longest first, as alternatives. */
export function keywordSource(literals: readonly string[]): string {
  return [...new Set(literals)].sort((a, b) => b.length - a.length).map(escapeLiteral).join('|');
}

/**
 * Where a search for `literals` may start: a regex of `anchors` (one of which each literal contains) and how
 * far before an anchor's hit a literal can begin. Throws when a literal holds none of the anchors.
 */
function keywordGate(literals: readonly string[], anchors: readonly string[], ignoreCase: boolean): { pattern: RegExp; back: number } {
  const fold = (value: string) => (ignoreCase ? value.toLowerCase() : value);
  let back = 0;
  for (const literal of literals) {
    const offsets = anchors.map((anchor) => fold(literal).indexOf(fold(anchor))).filter((at) => at >= 0);
    if (offsets.length === 0) throw new Error(`keyword ${JSON.stringify(literal)} holds none of the anchors`);
    back = Math.max(back, Math.min(...offsets));
  }
  return { pattern: new RegExp(keywordSource(anchors), ignoreCase ? 'i' : ''), back };
}

/**
 * Finds every occurrence of any of the literals, left to right (overlapping hits of different literals at
 * one position are reported once, the longest first). `ignoreCase`: ASCII case-insensitive. `anchors`: a few
 * short literals, one inside each keyword, searched first (a small alternation V8 skips through several
 * times faster than the keywords' own); no anchor, no keyword, and the keyword search starts at the first.
 */
export function keywordFinder(literals: readonly string[], ignoreCase = false, anchors?: readonly string[]): (text: string, onHit: (index: number, literal: string) => number | void) => void {
  const pattern = new RegExp(keywordSource(literals), ignoreCase ? 'gi' : 'g');
  const gate = anchors && keywordGate(literals, anchors, ignoreCase);
  return (text, onHit) => {
    pattern.lastIndex = 0;
    if (gate) {
      const first = text.search(gate.pattern);
      if (first < 0) return;
      pattern.lastIndex = Math.max(0, first - gate.back);
    }
    for (let hit = pattern.exec(text); hit !== null; hit = pattern.exec(text)) {
      // The detector may tell where to go on (past what it matched); never backwards.
      const resume = onHit(hit.index, hit[0]);
      pattern.lastIndex = Math.max(hit.index + 1, typeof resume === 'number' ? resume : 0);
    }
  };
}

/** Shannon entropy in bits per character of a short string (the generic-secret detector's test). */
export function entropy(value: string): number {
  const counts = new Map<string, number>();
  for (const c of value) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / value.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}
