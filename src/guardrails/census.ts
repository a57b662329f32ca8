// A census of a text, taken before the built-in detectors read it (docs/governance.md#guardrails): one forward
// pass over the text's bytes records which pairs of adjacent ASCII characters occur; whether any character lies
// past ASCII, and whether an `@`, `:`, `=` or digit occurs, come from the encoder, `indexOf` and a one-class
// regex. A detector whose every finding needs something the census did not see cannot find anything in the text
// and is not run: the findings are the same, and a clean text is read once instead of once per detector. The
// pass does the same loads, stores and shifts for every byte, with no branch on what the byte is, so it costs
// about the same on a text the branch predictor has not learnt (a tool result in a busy server) as on one it
// has; the detectors' regex searches and skipping scans do not. (A run-length count of digits in the same pass
// measured as many instructions as the numbers detector it would have skipped.)

/** What a gate reads: the census of the text a detector is about to scan. */
export interface Census {
  /** Whether `first` is followed somewhere by `second` (ASCII codes); true for anything when the text was too long to count. */
  pair(first: number, second: number): boolean;
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
}

/** Texts whose UTF-8 is longer get no pairs counted (every pair then counts as seen): the census is for the many small results. */
const MAX_CENSUS_BYTES = 64 * 1024;
const DIGIT = /[0-9]/;
/** One buffer for the pairs and the text's bytes: fewer arrays for V8 to keep at hand in the loop. */
const PAIRS = 128 * 128;

/** Whether a Uint32Array reads a word's first byte in its low bits (all platforms Node runs on today). */
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

/**
 * Stamps the pairs of the bytes in `work[PAIRS, PAIRS + length)` (`words`: the same memory, four bytes a word).
 * Four bytes a turn, read as one word: a quarter of the loads and about half the instructions of a byte a turn in
 * V8 (bounds checks and address arithmetic per access). Up to three zero bytes past the text make its last turn
 * whole, adding pairs with NUL, which no literal holds.
 */
function count(work: Uint8Array, words: Uint32Array, length: number, stamp: number): void {
  const end = PAIRS + length;
  work[end] = 0;
  work[end + 1] = 0;
  work[end + 2] = 0;
  let previous = 0;
  // A byte past ASCII (a piece of a longer character) takes its low seven bits: it can only add pairs, so a
  // gate sees more than the text holds, never less.
  if (LITTLE_ENDIAN) {
    const last = (end + 3) >>> 2;
    for (let k = PAIRS >>> 2; k < last; k += 1) {
      const word = words[k]!;
      const a = word & 127;
      const b = (word >>> 8) & 127;
      const c = (word >>> 16) & 127;
      const d = (word >>> 24) & 127;
      work[previous | a] = stamp;
      work[(a << 7) | b] = stamp;
      work[(b << 7) | c] = stamp;
      work[(c << 7) | d] = stamp;
      previous = d << 7;
    }
    return;
  }
  for (let i = PAIRS; i < end; i += 1) {
    const byte = work[i]! & 127;
    work[previous | byte] = stamp;
    previous = byte << 7;
  }
}

class Taken implements Census {
  /** Pair (a, b) at `(a << 7) | b` holds the stamp of the census that saw it (no clearing between censuses); the text's bytes follow. */
  private readonly work = new Uint8Array(PAIRS + MAX_CENSUS_BYTES + 4);
  private readonly words = new Uint32Array(this.work.buffer);
  private readonly bytes = this.work.subarray(PAIRS, PAIRS + MAX_CENSUS_BYTES);
  private readonly encoder = new TextEncoder();
  private stamp = 0;
  private complete = true;
  nonAscii = false;
  at = false;
  assignment = false;
  digit = false;
  /** Counts the censuses taken, so a scan knows whether the shared one still describes its text. */
  generation = 0;

  pair(first: number, second: number): boolean {
    return !this.complete || this.work[(first << 7) | second] === this.stamp;
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
    if (this.complete) count(this.work, this.words, written, this.stamp);
    // The copy may hold a secret: it does not outlive the census.
    this.bytes.fill(0, 0, written);
  }
}

/** The one census there is: taking one is synchronous, and a scan checks the generation before reusing it. */
const shared = new Taken();

/** Takes the census of `text` (overwriting the last one taken). */
export function takeCensus(text: string): Census {
  shared.take(text);
  return shared;
}

/** A census taker for one scan: the text it counted last is not read again while no one else took a census since. */
export function censusTaker(): (text: string) => Census {
  let last: string | undefined;
  let generation = -1;
  return (text) => {
    if (text !== last || generation !== shared.generation) {
      shared.take(text);
      last = text;
      generation = shared.generation;
    }
    return shared;
  };
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
      const ways = [...new Set((ignoreCase ? foldings(a) : [a]).flatMap((first) => (ignoreCase ? foldings(b) : [b]).map((second) => ((first & 127) << 7) | (second & 127))))].sort((x, y) => x - y);
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
    let seen = false;
    for (let w = group + 2; w < firstEnd; w += 1) if (pairs[program[w]!] === stamp) seen = true;
    if (seen) {
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
