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

/**
 * The characters a phone, card or social security number is written with: digits and the separators between their
 * groups. The numbers detector (pii.ts) reads runs of them and the census (census.ts) counts digits in each run.
 */
export const NUMBER_CHARS = charClass('0-9 .()+-');

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
 * Characters from the rarest to the commonest in what tools return (prose, JSON, URLs; letters by their
 * frequency in English): a literal is searched from its rarest character. Characters not listed count as rarer
 * than all of these.
 */
const COMMONNESS = 'QZXJKVBPYGFWMUCLDRHSNIOATE_zqxjkvbpygfwmucldrhsnioate=0123456789-/.:,"{} ';
const commonness = (c: string): number => COMMONNESS.indexOf(c);
/** Anchors of three characters made V8's search two to four times slower than the literals' own alternation; five, two to three times faster. */
const MIN_ANCHOR_CHARS = 5;

/** Where a literal is searched from: the suffix from its rarest character, at least five characters long (the whole of a shorter one). */
function anchorAt(literal: string): number {
  let best = 0;
  for (let i = 1; i <= literal.length - MIN_ANCHOR_CHARS; i += 1) if (commonness(literal[i]!) < commonness(literal[best]!)) best = i;
  return best;
}

/** Case-insensitive like V8's regexes without the `u` flag: ASCII letters fold, nothing else matches an ASCII character. */
function foldedAt(text: string, at: number, literal: string): boolean {
  if (at + literal.length > text.length) return false;
  for (let k = 0; k < literal.length; k += 1) {
    let c = text.charCodeAt(at + k);
    if (c >= 65 && c <= 90) c += 32;
    if (c !== literal.charCodeAt(k)) return false;
  }
  return true;
}

interface Standing {
  readonly literal: string;
  /** Where the anchor lies in the literal. */
  readonly offset: number;
}

/**
 * Finds every occurrence of any of the literals, left to right (overlapping hits of different literals at
 * one position are reported once, the longest first): what a regex of the literals' alternation finds,
 * searched from each literal's rarest character instead (an alternation whose first characters are rare is
 * one V8 skips through about twice as fast). The hits are collected, then reported in text order, each
 * after the last hit's resume point. `ignoreCase`: ASCII case-insensitive. `anchors`: a few short literals,
 * one inside each keyword, searched first (a small alternation V8 skips through several times faster than
 * the keywords' own); no anchor, no keyword, and the keyword search starts at the first.
 */
export function keywordFinder(literals: readonly string[], ignoreCase = false, anchors?: readonly string[]): (text: string, onHit: (index: number, literal: string) => number | void) => void {
  const folded = [...new Set(literals.map((literal) => (ignoreCase ? literal.toLowerCase() : literal)))];
  // A single literal is searched whole: V8 skips through one literal faster than through any part of it.
  const offsets = new Map(folded.map((literal) => [literal, folded.length === 1 ? 0 : anchorAt(literal)]));
  const anchorsOf = [...new Set(folded.map((literal) => literal.slice(offsets.get(literal))))];
  // At a hit of an anchor, the literals whose anchor is it or a prefix of it (all match there), longest first.
  const standing = new Map<string, Standing[]>();
  for (const anchor of anchorsOf) {
    const here = folded.filter((literal) => anchor.startsWith(literal.slice(offsets.get(literal))));
    standing.set(anchor, here.sort((a, b) => b.length - a.length).map((literal) => ({ literal, offset: offsets.get(literal)! })));
  }
  const pattern = new RegExp(keywordSource(anchorsOf), ignoreCase ? 'gi' : 'g');
  const gate = anchors && keywordGate(literals, anchors, ignoreCase);
  const matches = ignoreCase ? foldedAt : (text: string, at: number, literal: string) => text.startsWith(literal, at);
  return (text, onHit) => {
    let from = 0;
    if (gate) {
      const first = text.search(gate.pattern);
      if (first < 0) return;
      from = Math.max(0, first - gate.back);
    }
    const hits: Array<{ index: number; literal: string }> = [];
    pattern.lastIndex = from;
    for (let hit = pattern.exec(text); hit !== null; hit = pattern.exec(text)) {
      for (const { literal, offset } of standing.get(ignoreCase ? hit[0].toLowerCase() : hit[0])!) {
        const index = hit.index - offset;
        if (index >= from && matches(text, index, literal)) hits.push({ index, literal });
      }
      pattern.lastIndex = hit.index + 1;
    }
    if (hits.length === 0) return;
    hits.sort((a, b) => a.index - b.index || b.literal.length - a.literal.length);
    let next = from;
    for (const { index, literal } of hits) {
      if (index < next) continue;
      // The detector may tell where to go on (past what it matched); never backwards.
      const resume = onHit(index, ignoreCase ? text.slice(index, index + literal.length) : literal);
      next = Math.max(index + 1, typeof resume === 'number' ? resume : 0);
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
