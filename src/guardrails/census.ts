// A census of a text, taken before the built-in detectors read it (docs/governance.md#guardrails): one forward
// pass over the text's bytes records which pairs of adjacent bytes occur (a pair of ASCII characters is a pair of
// bytes, exactly) and whether nine digits occur in one run of number characters; whether any character lies past
// ASCII, and whether an `@`, `:`, `=` or digit occurs, come from the encoder, `indexOf` and a one-class regex. A
// detector whose every finding needs something the census did not see cannot find anything in the text and is not
// run: the findings are the same, and a clean text is read once instead of once per detector. The pass does the same loads, stores and shifts for every
// byte, with no branch on what the byte is, so it costs about the same on a text the branch predictor has not
// learnt (a tool result in a busy server) as on one it has; the detectors' regex searches and skipping scans do not.

import { CENSUS_WASM } from './census-wasm.js';
import { inClass, NUMBER_CHARS } from './text.js';

/** What a gate reads: the census of the text a detector is about to scan. */
export interface Census {
  /** Whether `first` is followed somewhere by `second` (ASCII codes); true for anything when the text was too long to count. */
  pair(first: number, second: number): boolean;
  /** Whether `first` (an ASCII code) is followed somewhere by a digit; true when the text was too long to count. */
  followedByDigit(first: number): boolean;
  /** Whether one of the set's literals may occur: the pairs of adjacent characters tested for one of them seen (see literalSet). */
  mayHold(set: LiteralSet): boolean;
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
}

/** Texts whose UTF-8 is longer get no pairs counted (every pair then counts as seen): the census is for the many small results. */
const MAX_CENSUS_BYTES = 64 * 1024;
const DIGIT = /[0-9]/;
/** Pair (a, b) of bytes is at `a | b << 8`: the two bytes as they lie in memory, read as one little-endian u16. */
const PAIRS = 256 * 256;
const pairAt = (first: number, second: number): number => first | (second << 8);
/** Where census.wat keeps its run table and the text's bytes (the pairs are at 0). */
const RUN_TABLE_AT = 65536;
const TEXT_AT = 69632;

/** What counts a text's pairs: the pairs at `work[0, PAIRS)`, the text's UTF-8 written into `bytes` first (with four bytes of room after it). */
interface Counter {
  readonly work: Uint8Array;
  readonly bytes: Uint8Array;
  /** Stamps the pairs of the first `length` bytes; whether nine digits occur in one run of number characters (true: may). */
  count(length: number, stamp: number): boolean;
}

const isDigit = (byte: number): boolean => byte >= 48 && byte <= 57;

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
  const { memory, count } = exports as { memory: WebAssembly.Memory; count: (length: number, stamp: number) => number };
  const view = new Uint8Array(memory.buffer);
  // The run table: the digits in the current run of number characters, 9 once nine were seen.
  for (let state = 0; state <= 9; state += 1) {
    for (let byte = 0; byte < 256; byte += 1) view[RUN_TABLE_AT + (state << 8) + byte] = state === 9 ? 9 : isDigit(byte) ? state + 1 : inClass(NUMBER_CHARS, byte) ? state : 0;
  }
  return { work: view.subarray(0, PAIRS), bytes: view.subarray(TEXT_AT, TEXT_AT + MAX_CENSUS_BYTES), count: (length, stamp) => count(length, stamp) === 1 };
}

/** The census pass in JavaScript, where WebAssembly is missing: the pairs only (every text may then hold nine digits in a run). */
function scriptCounter(): Counter {
  const work = new Uint8Array(PAIRS + MAX_CENSUS_BYTES + 4);
  return {
    work,
    bytes: work.subarray(PAIRS, PAIRS + MAX_CENSUS_BYTES),
    count: (length, stamp) => {
      stampPairs(work, length, stamp);
      return true;
    },
  };
}

/** Stamps the pairs of the bytes in `work[PAIRS, PAIRS + length)`; the one after the last is zero (a pair with NUL, which no literal holds). */
function stampPairs(work: Uint8Array, length: number, stamp: number): void {
  const end = PAIRS + length;
  work[end] = 0;
  for (let i = PAIRS; i < end; i += 1) work[pairAt(work[i]!, work[i + 1]!)] = stamp;
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

  followedByDigit(first: number): boolean {
    if (!this.complete) return true;
    const { work, stamp } = this;
    for (let digit = 48; digit <= 57; digit += 1) if (work[pairAt(first, digit)] === stamp) return true;
    return false;
  }

  mayHold(set: LiteralSet): boolean {
    return !this.complete || mayHoldIn(set, this.work, this.stamp);
  }

  take(text: string): void {
    this.generation += 1;
    this.stamp = this.stamp === 255 ? 1 : this.stamp + 1;
    if (this.stamp === 1) this.work.fill(0, 0, PAIRS);
    this.at = text.indexOf('@') >= 0;
    this.assignment = text.indexOf(':') >= 0 || text.indexOf('=') >= 0;
    this.digit = DIGIT.test(text);
    const { read, written } = this.encoder.encodeInto(text, this.bytes);
    this.complete = read === text.length;
    this.nonAscii = !this.complete || written !== read;
    const nine = this.complete && this.counter.count(written, this.stamp);
    this.nineDigits = this.digit && (!this.complete || nine);
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

const foldings = (code: number): number[] => (code >= 65 && code <= 90 ? [code, code + 32] : code >= 97 && code <= 122 ? [code - 32, code] : [code]);

/** Characters from the commonest to the rarer in what tools return (JSON, prose); unlisted ones count as rarest. */
const COMMON = ' e"taoinsrhl:,dcu0123456789mf.pgw/ybv-k_xjqz';
const rarity = (code: number): number => {
  const at = COMMON.indexOf(String.fromCharCode(code).toLowerCase());
  return at < 0 ? COMMON.length : at;
};

/** Pairs tested per literal, its rarest. */
const PAIRS_TESTED = 3;


/** One pair of adjacent characters as the indexes it may be stamped at (both cases of its letters with ignoreCase). */
type Ways = number[];

/**
 * Literals compiled for `Census.mayHold`: each literal's rarest pairs of adjacent characters (at most PAIRS_TESTED),
 * grouped by the rarest one, which is tested once per group: most texts rule a whole group out with it. Laid out
 * flat in one Int32Array, read by index (a gate runs on every counted text: nested arrays and an `every` callback
 * per group cost more than the table reads themselves). Per group: the index after the group, the number of ways
 * of its first pair and those ways, then its rests, each as the index after the rest followed by its pairs, each
 * pair as its number of ways and those ways.
 */
export interface LiteralSet {
  readonly program: Int32Array;
  /** A literal of one character, or one with a character past ASCII: never ruled out. */
  readonly always: boolean;
}

interface Pair {
  readonly key: string;
  readonly ways: Ways;
  readonly rarity: number;
}

/** Compiles `literals` for `Census.mayHold` (`ignoreCase`: ASCII letters in either case). */
export function literalSet(literals: readonly string[], ignoreCase = false): LiteralSet {
  const always = literals.some((literal) => literal.length < 2 || [...literal].some((c) => c.charCodeAt(0) >= 128));
  // Each literal's pairs to test: its rarest ones are enough to rule most texts out; testing every pair would cost more than it saves.
  const tested: Pair[][] = [];
  for (const literal of literals) {
    if (literal.length < 2) continue;
    const pairs = new Map<string, Pair>();
    for (let i = 1; i < literal.length; i += 1) {
      const a = literal.charCodeAt(i - 1);
      const b = literal.charCodeAt(i);
      const ways = [...new Set((ignoreCase ? foldings(a) : [a]).flatMap((first) => (ignoreCase ? foldings(b) : [b]).map((second) => pairAt(first, second))))].sort((x, y) => x - y);
      pairs.set(ways.join(), { key: ways.join(), ways, rarity: Math.max(rarity(a), rarity(b)) });
    }
    tested.push([...pairs.values()].sort((x, y) => y.rarity - x.rarity).slice(0, PAIRS_TESTED));
  }
  // Groups by a pair their literals share, the pair most literals left hold first (the rarer on a tie): a text
  // without it rules the whole group out with one read, and fewer groups are fewer reads on every text.
  const program: number[] = [];
  for (let left = tested; left.length > 0; ) {
    const shared = new Map<string, { pair: Pair; count: number }>();
    for (const pairs of left) for (const pair of pairs) shared.set(pair.key, { pair, count: (shared.get(pair.key)?.count ?? 0) + 1 });
    const first = [...shared.values()].reduce((best, next) => (next.count > best.count || (next.count === best.count && next.pair.rarity > best.pair.rarity) ? next : best)).pair;
    const group = program.push(0) - 1;
    program.push(first.ways.length, ...first.ways);
    const rests = new Map<string, Pair[]>();
    const holds = (pairs: readonly Pair[]) => pairs.some((pair) => pair.key === first.key);
    for (const pairs of left.filter(holds)) {
      const rest = pairs.filter((pair) => pair.key !== first.key);
      rests.set(rest.map((pair) => pair.key).join(';'), rest);
    }
    for (const rest of rests.values()) {
      const at = program.push(0) - 1;
      for (const { ways } of rest) program.push(ways.length, ...ways);
      program[at] = program.length;
    }
    program[group] = program.length;
    left = left.filter((pairs) => !holds(pairs));
  }
  return { program: Int32Array.from(program), always };
}

/** Whether one of the literals may occur in the text `pairs` describe: the pairs tested for one literal all seen. */
export function mayHoldIn(set: LiteralSet, pairs: Uint8Array, stamp: number): boolean {
  if (set.always) return true;
  const program = set.program;
  for (let group = 0; group < program.length; ) {
    const groupEnd = program[group]!;
    // The group's first pair, written any of its ways.
    const firstEnd = group + 2 + program[group + 1]!;
    let found = false;
    for (let w = group + 2; w < firstEnd; w += 1) if (pairs[program[w]!] === stamp) found = true;
    if (found) {
      for (let rest = firstEnd; rest < groupEnd; ) {
        const restEnd = program[rest]!;
        let all = true;
        for (let pair = rest + 1; pair < restEnd && all; ) {
          const pairEnd = pair + 1 + program[pair]!;
          let any = false;
          for (let w = pair + 1; w < pairEnd; w += 1) if (pairs[program[w]!] === stamp) any = true;
          all = any;
          pair = pairEnd;
        }
        if (all) return true;
        rest = restEnd;
      }
    }
    group = groupEnd;
  }
  return false;
}

/**
 * A gate for `literals`: whether one of them may occur in the counted text, its rarest pairs of adjacent
 * characters seen. A necessary condition only (the pairs may lie apart, others may be missing).
 */
export function literalsMayOccur(literals: readonly string[], ignoreCase = false): (census: Census) => boolean {
  const set = literalSet(literals, ignoreCase);
  return (census) => census.mayHold(set);
}
