// A census of a text, taken before the built-in detectors read it (docs/governance.md#guardrails): one forward
// pass over the text's bytes records which pairs of adjacent characters occur (letter case folded, see foldByte),
// whether nine digits occur in one run of number characters and whether two capitals are followed by two digits;
// whether any character lies past ASCII, and whether an `@`, `:`, `=` or digit occurs, come from the encoder,
// `indexOf` and a one-class regex. A detector whose every finding needs something the census did not see cannot
// find anything in the text and is not run: the findings are the same, and a clean text is read once instead of
// once per detector. The pass reads sixteen bytes at a time for the classes and stamps every pair with the same load
// and store, so it costs about the same on a text the branch predictor has not learnt (a tool result in a busy
// server) as on one it has; the detectors' regex searches and skipping scans do not. The gates then run their pair
// programs (pairSet) over the stamped pairs, in the same WebAssembly instance.

import { CENSUS_WASM } from './census-wasm.js';
import { inClass, NUMBER_CHARS } from './text.js';

/** What a gate reads: the census of the text a detector is about to scan. */
export interface Census {
  /**
   * Whether `first` is followed somewhere by `second` (character codes, folded: see foldByte); true for anything
   * when the text was too long to count.
   */
  pair(first: number, second: number): boolean;
  /** Whether one of the set's pair groups holds (see pairSet); true when the text was too long to count. */
  mayHold(set: PairSet): boolean;
  /** A character past ASCII occurs (lower-casing one may give ASCII letters; hidden text is all past it). */
  readonly nonAscii: boolean;
  /** An `@` occurs. */
  readonly at: boolean;
  /** A `:` or `=` occurs. */
  readonly assignment: boolean;
  /** A digit occurs. */
  readonly digit: boolean;
  /**
   * Nine digits occur in one run of the characters numbers are written with (digits, space, `.`, `(`, `)`, `+`,
   * `-`): a card, a social security number or a phone number needs it. True when the text was too long to count.
   */
  readonly nineDigits: boolean;
  /** Two capital letters followed by two digits occur: an IBAN starts so. True when the text was too long to count. */
  readonly ibanShape: boolean;
}

/** Texts whose UTF-8 is longer get no pairs counted (every pair then counts as seen): the census is for the many small results. */
const MAX_CENSUS_BYTES = 64 * 1024;
const DIGIT = /[0-9]/;

/**
 * A byte as the pairs count it: a letter of either case is its low five bits (1–26), any other byte its low six
 * bits. Every folded byte is below 64, so the pairs a text can stamp lie in the first 64 bytes of 64 rows of the
 * table: 64 cache lines, whatever the text. Folding only merges pairs, so a gate reading them stays a necessary
 * condition (every gate is thereby blind to letter case).
 */
const foldByte = (byte: number): number => (((byte | 0x20) >= 97 && (byte | 0x20) <= 122) ? byte & 0x1f : byte & 0x3f);
/** The folded pair (a, b) is at `a | b << 8`: the two folded bytes as they lie in memory, read as one little-endian u16. */
const PAIRS = 64 * 256;
/** The index of the pair (`first`, `second`) of character codes (below 128) in the pairs table. */
export const pairAt = (first: number, second: number): number => foldByte(first) | (foldByte(second) << 8);
/** Where census.wat keeps its separator table, the text's bytes and the gates' programs (the pairs are at 0). */
const SEPARATORS_AT = 16384;
const TEXT_AT = 20480;
const PROGRAMS_AT = 90112;
const PROGRAMS_CAPACITY = (2 * 65536 - PROGRAMS_AT) / 2;

/** What `count` answers: bit 0, nine digits in a run; bit 1, two capitals followed by two digits. */
const NINE_DIGITS = 1;
const IBAN_SHAPE = 2;

/**
 * Every pair set's program, one after the other (see pairSet for the layout); positions are counted from the
 * start of this list. Built-in gates are compiled once, when their modules load.
 */
let programs = new Uint16Array(0);

/** What counts a text's pairs: the pairs at `work[0, PAIRS)`, the text's UTF-8 written into `bytes` first (with sixteen bytes of room after it). */
interface Counter {
  readonly work: Uint8Array;
  readonly bytes: Uint8Array;
  /** Folds the first `length` bytes and stamps their pairs; what occurs (NINE_DIGITS, IBAN_SHAPE; set: may). */
  count(length: number, stamp: number): number;
  /** Whether the program at [start, end) holds over the pairs stamped `stamp`. */
  holds(start: number, end: number, stamp: number): boolean;
}

/**
 * census.wat's separator table: lane i is 0xff when 0x20 + i is one of NUMBER_CHARS other than a digit. census.wat
 * reads the digits 0–9 itself, and every other number character must lie in 0x20–0x2f.
 */
function separatorTable(): Uint8Array {
  const table = new Uint8Array(16);
  for (let code = 0; code < 128; code += 1) {
    const digit = code >= 48 && code <= 57;
    if (digit && !inClass(NUMBER_CHARS, code)) throw new Error('census.wat reads every digit as a number character');
    if (digit || !inClass(NUMBER_CHARS, code)) continue;
    if (code >> 4 !== 2) throw new Error(`census.wat's separator table cannot hold the number character ${JSON.stringify(String.fromCharCode(code))}`);
    table[code & 15] = 0xff;
  }
  return table;
}

/** The census pass in WebAssembly (census.wat): fewer instructions for the pairs and the run of digits than JavaScript spends on the pairs alone. */
function wasmCounter(): Counter | undefined {
  // `node --jitless` has no WebAssembly: the JavaScript pass below then counts the pairs.
  if (typeof WebAssembly !== 'object') return undefined;
  let exports: WebAssembly.Exports;
  try {
    exports = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(CENSUS_WASM, 'base64'))).exports;
  } catch {
    return undefined;
  }
  const { memory, count, holds } = exports as {
    memory: WebAssembly.Memory;
    count: (length: number, stamp: number) => number;
    holds: (start: number, end: number, stamp: number) => number;
  };
  const view = new Uint8Array(memory.buffer);
  view.set(separatorTable(), SEPARATORS_AT);
  const loaded = new Uint16Array(memory.buffer, PROGRAMS_AT, PROGRAMS_CAPACITY);
  /** How much of `programs` this instance's memory holds. */
  let copied = 0;
  const work = view.subarray(0, PAIRS);
  return {
    work,
    bytes: view.subarray(TEXT_AT, TEXT_AT + MAX_CENSUS_BYTES),
    count,
    holds: (start, end, stamp) => {
      if (end > copied) {
        // Programs past the memory's room (none of the built-in gates come near it) are run in JavaScript.
        if (programs.length > PROGRAMS_CAPACITY) return holdsIn(programs, start, end, work, stamp);
        // A set's rests lie after its groups: everything compiled so far is copied.
        loaded.set(programs.subarray(copied), copied);
        copied = programs.length;
      }
      return holds(start, end, stamp) === 1;
    },
  };
}

/** The census pass in JavaScript, where WebAssembly is missing: the pairs only (every text may then hold nine digits in a run, and an IBAN). */
function scriptCounter(): Counter {
  const work = new Uint8Array(PAIRS + MAX_CENSUS_BYTES + 16);
  const pairs = work.subarray(0, PAIRS);
  return {
    work: pairs,
    bytes: work.subarray(PAIRS, PAIRS + MAX_CENSUS_BYTES),
    count: (length, stamp) => {
      stampPairs(work, length, stamp);
      return NINE_DIGITS | IBAN_SHAPE;
    },
    holds: (start, end, stamp) => holdsIn(programs, start, end, pairs, stamp),
  };
}

/** Stamps the folded pairs of the bytes in `work[PAIRS, PAIRS + length)`; the one after the last is zero (a pair with NUL, which no literal holds). */
function stampPairs(work: Uint8Array, length: number, stamp: number): void {
  const end = PAIRS + length;
  work[end] = 0;
  work[0] = stamp; // the pair (0, 0), as census.wat stamps it
  let first = foldByte(work[PAIRS]!);
  for (let i = PAIRS; i < end; i += 1) {
    const second = foldByte(work[i + 1]!);
    work[first | (second << 8)] = stamp;
    first = second;
  }
}

class Taken implements Census {
  private readonly counter: Counter;
  /** Pair (a, b) at `a | b << 8` holds the stamp of the census that saw it (no clearing between censuses). */
  private readonly work: Uint8Array;
  private readonly bytes: Uint8Array;
  private readonly encoder = new TextEncoder();
  private stamp = 0;
  private complete = true;
  nonAscii = false;
  at = false;
  assignment = false;
  digit = false;
  nineDigits = true;
  ibanShape = true;
  /** Counts the censuses taken, so a scan knows whether the shared one still describes its text. */
  generation = 0;

  constructor(counter: Counter) {
    this.counter = counter;
    this.work = counter.work;
    this.bytes = counter.bytes;
  }

  pair(first: number, second: number): boolean {
    return !this.complete || this.work[pairAt(first, second)] === this.stamp;
  }

  mayHold(set: PairSet): boolean {
    return set.always || !this.complete || this.counter.holds(set.start, set.end, this.stamp);
  }

  take(text: string): void {
    this.generation += 1;
    this.stamp = this.stamp === 255 ? 1 : this.stamp + 1;
    if (this.stamp === 1) this.work.fill(0);
    this.at = text.indexOf('@') >= 0;
    this.assignment = text.indexOf(':') >= 0 || text.indexOf('=') >= 0;
    this.digit = DIGIT.test(text);
    const { read, written } = this.encoder.encodeInto(text, this.bytes);
    this.complete = read === text.length;
    this.nonAscii = !this.complete || written !== read;
    const seen = this.complete ? this.counter.count(written, this.stamp) : NINE_DIGITS | IBAN_SHAPE;
    this.nineDigits = this.digit && (seen & NINE_DIGITS) !== 0;
    this.ibanShape = this.digit && (seen & IBAN_SHAPE) !== 0;
    // The copy may hold a secret: it does not outlive the census.
    this.bytes.fill(0, 0, written);
  }
}

/** The one census there is: taking one is synchronous, and a scan checks the generation before reusing it. */
const shared = new Taken(wasmCounter() ?? scriptCounter());

/** A census taker of its own, on the given pass (tests compare the two passes; the scans share the one above). */
export function separateCensusTaker(pass: 'wasm' | 'script'): (text: string) => Census {
  const counter = pass === 'wasm' ? wasmCounter() : scriptCounter();
  if (!counter) throw new Error('WebAssembly is not available');
  const taken = new Taken(counter);
  return (text) => {
    taken.take(text);
    return taken;
  };
}

/** Takes the census of `text` (overwriting the last one taken). */
export function takeCensus(text: string): Census {
  shared.take(text);
  return shared;
}

/** Where `detect` gets a text's census: taken afresh, or kept by a scan for its next rule over the same text. */
export interface CensusSource {
  census(text: string): Census;
}

/** Takes every census afresh. */
export const FRESH_CENSUS: CensusSource = { census: takeCensus };

/** What a scan keeps of the census it took last: the text, and the shared census's generation then. */
export interface KeptCensus {
  censusText: string | undefined;
  censusGeneration: number;
}

/** The census of `text`, taken again only when no one took one since `kept`'s, for another text or this one. */
export function keptCensus(text: string, kept: KeptCensus): Census {
  if (text !== kept.censusText || kept.censusGeneration !== shared.generation) {
    shared.take(text);
    kept.censusText = text;
    kept.censusGeneration = shared.generation;
  }
  return shared;
}

/** Characters from the commonest to the rarer in what tools return (JSON, prose); unlisted ones count as rarest. */
const COMMON = ' e"taoinsrhl:,dcu0123456789mf.pgw/ybv-k_xjqz';
const rarity = (code: number): number => {
  const at = COMMON.indexOf(String.fromCharCode(code).toLowerCase());
  return at < 0 ? COMMON.length : at;
};

/** Pairs tested per literal, its rarest. */
const PAIRS_TESTED = 3;

/** One test of a pair set: pairs as indexes in the pairs table; it holds when one of them is stamped. */
type Ways = readonly number[];

/** A group of a pair set: it holds when its first test holds and every test of one of its rests does. */
interface PairGroup {
  readonly first: Ways;
  readonly rests: ReadonlyArray<readonly Ways[]>;
}

/**
 * A gate's pairs, compiled for `Census.mayHold`: a program in `programs`, run in census.wat (or holdsIn, without
 * WebAssembly) over the stamped pairs. Its groups lie side by side at [start, end), each as the position of its
 * rests and its first test: most texts rule a group out by its first test, so the rests, after `end`, are read
 * seldom. The rests of a group: the position after them, then each rest as the position after it and its tests.
 * A test: its number of ways, then the ways.
 */
export interface PairSet {
  readonly start: number;
  readonly end: number;
  /** A literal of one character, or one with a character past ASCII: never ruled out. */
  readonly always: boolean;
}

/** Compiles `groups` into a program of its own, appended to `programs`. */
export function pairSet(groups: readonly PairGroup[], always = false): PairSet {
  const start = programs.length;
  const end = start + groups.reduce((length, group) => length + 2 + group.first.length, 0);
  const program: number[] = [];
  const rests: number[] = [];
  for (const group of groups) {
    program.push(end + rests.length, group.first.length, ...group.first);
    const restsAt = rests.push(0) - 1;
    for (const rest of group.rests) {
      const restAt = rests.push(0) - 1;
      for (const ways of rest) rests.push(ways.length, ...ways);
      rests[restAt] = end + rests.length;
    }
    rests[restsAt] = end + rests.length;
  }
  const grown = new Uint16Array(end + rests.length);
  if (grown.length > 0xffff) throw new Error("the gates' programs outgrow their 16-bit positions");
  grown.set(programs);
  grown.set(program, start);
  grown.set(rests, end);
  programs = grown;
  return { start, end, always };
}

interface Pair {
  readonly key: number;
  readonly rarity: number;
}

/**
 * Compiles `literals` for `Census.mayHold`, in either letter case (the census folds it): each literal's rarest
 * pairs of adjacent characters (at most PAIRS_TESTED), grouped by a pair their literals share.
 */
function literalSet(literals: readonly string[]): PairSet {
  const always = literals.some((literal) => literal.length < 2 || [...literal].some((c) => c.charCodeAt(0) >= 128));
  // Each literal's pairs to test: its rarest ones are enough to rule most texts out; testing every pair would cost more than it saves.
  const tested: Pair[][] = [];
  for (const literal of literals) {
    if (literal.length < 2) continue;
    const pairs = new Map<number, Pair>();
    for (let i = 1; i < literal.length; i += 1) {
      const a = literal.charCodeAt(i - 1);
      const b = literal.charCodeAt(i);
      const key = pairAt(a, b);
      pairs.set(key, { key, rarity: Math.max(rarity(a), rarity(b)) });
    }
    tested.push([...pairs.values()].sort((x, y) => y.rarity - x.rarity).slice(0, PAIRS_TESTED));
  }
  // Groups by a pair their literals share, the pair most literals left hold first (the rarer on a tie): a text
  // without it rules the whole group out with one read, and fewer groups are fewer reads on every text.
  const groups: PairGroup[] = [];
  for (let left = tested; left.length > 0; ) {
    const shared = new Map<number, { pair: Pair; count: number }>();
    for (const pairs of left) for (const pair of pairs) shared.set(pair.key, { pair, count: (shared.get(pair.key)?.count ?? 0) + 1 });
    const first = [...shared.values()].reduce((best, next) => (next.count > best.count || (next.count === best.count && next.pair.rarity > best.pair.rarity) ? next : best)).pair;
    const holds = (pairs: readonly Pair[]) => pairs.some((pair) => pair.key === first.key);
    const rests = new Map<string, Ways[]>();
    for (const pairs of left.filter(holds)) {
      const rest = pairs.filter((pair) => pair.key !== first.key);
      rests.set(rest.map((pair) => pair.key).join(';'), rest.map((pair) => [pair.key]));
    }
    groups.push({ first: [first.key], rests: [...rests.values()] });
    left = left.filter((pairs) => !holds(pairs));
  }
  return pairSet(groups, always);
}

/** The program's groups at [start, end) over the pairs stamped `stamp` (census.wat's `holds`, in JavaScript). */
function holdsIn(program: Uint16Array, start: number, end: number, pairs: Uint8Array, stamp: number): boolean {
  for (let group = start; group < end; ) {
    // The group's first test.
    const firstEnd = group + 2 + program[group + 1]!;
    let found = false;
    for (let w = group + 2; w < firstEnd; w += 1) if (pairs[program[w]!] === stamp) found = true;
    if (found) {
      const restsEnd = program[program[group]!]!;
      for (let rest = program[group]! + 1; rest < restsEnd; ) {
        const restEnd = program[rest]!;
        let all = true;
        for (let test = rest + 1; test < restEnd && all; ) {
          const testEnd = test + 1 + program[test]!;
          let any = false;
          for (let w = test + 1; w < testEnd; w += 1) if (pairs[program[w]!] === stamp) any = true;
          all = any;
          test = testEnd;
        }
        if (all) return true;
        rest = restEnd;
      }
    }
    group = firstEnd;
  }
  return false;
}

/**
 * A gate for `literals`, in either letter case: whether one of them may occur in the counted text, its rarest
 * pairs of adjacent characters seen. A necessary condition only (the pairs may lie apart, others may be missing).
 */
export function literalsMayOccur(literals: readonly string[]): (census: Census) => boolean {
  const set = literalSet(literals);
  return (census) => census.mayHold(set);
}
