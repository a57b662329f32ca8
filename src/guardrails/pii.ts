// The personal-data detectors (docs/governance.md#detectors): e-mail addresses, phone numbers, payment
// cards (Luhn), IBANs (mod-97) and US social security numbers (the ranges the SSA never issues are
// refused). Hand-written forward scans around a trigger character: linear in the text, no regex over it.
import { IBAN_LENGTHS, ibanValid, luhnValid } from './checksums.js';
import { pairAt, pairSet, type Census } from './census.js';
import { ALNUM, charClass, inClass, NUMBER_CHARS, runOf } from './text.js';
import type { Detector, Finding } from './types.js';

const LOCAL = charClass("A-Za-z0-9._%+'-");
const DOMAIN = charClass('A-Za-z0-9.-');
const LETTERS = charClass('A-Za-z');
/** File names with a resolution suffix (`logo@2x.png`) look like addresses; these endings are not TLDs people mail to. */
const FILE_ENDINGS = new Set(['png', 'jpg', 'jpeg', 'gif', 'svg', 'webp', 'ico', 'bmp', 'tif', 'tiff', 'js', 'mjs', 'ts', 'css', 'map', 'json']);

function emails(text: string, out: Finding[]): void {
  let lastEnd = 0;
  for (let at = text.indexOf('@'); at >= 0; at = text.indexOf('@', at + 1)) {
    if (at < lastEnd) continue;
    let start = at;
    while (start > lastEnd && at - start < 64 && inClass(LOCAL, text.charCodeAt(start - 1))) start -= 1;
    while (start < at && text[start] === '.') start += 1;
    if (start === at) continue;
    // `scheme://user:password@host` and `https://user@host` are URLs, not mailboxes.
    if (inUrlAuthority(text, start)) continue;
    const d = runOf(text, at + 1, DOMAIN, 253);
    let domain = text.slice(at + 1, at + 1 + d);
    while (domain.endsWith('.') || domain.endsWith('-')) domain = domain.slice(0, -1);
    const dot = domain.lastIndexOf('.');
    if (dot <= 0) continue;
    const tld = domain.slice(dot + 1);
    if (tld.length < 2 || runOf(tld, 0, LETTERS, 63) !== tld.length || FILE_ENDINGS.has(tld.toLowerCase())) continue;
    // `git@github.com:org/repo.git` is an SSH remote, not a mailbox.
    if (text[at + 1 + domain.length] === ':' && text.slice(start, at) === 'git') continue;
    lastEnd = at + 1 + domain.length;
    out.push({ kind: 'email', start, end: lastEnd });
  }
}

const URL_WORD_END = charClass(' \t\r\n"\'<>()[]{},;');

/** Whether `start` lies in a URL's authority: `://` earlier in the same word (looked for at most 256 characters back). */
function inUrlAuthority(text: string, start: number): boolean {
  let j = start;
  while (j > 0 && start - j < 256 && !inClass(URL_WORD_END, text.charCodeAt(j - 1))) j -= 1;
  return text.slice(j, start).includes('://');
}

const DIGIT = charClass('0-9');

/** A run of digit groups: its span, its digits, the group lengths and the separators used. */
interface DigitRun {
  start: number;
  end: number;
  digits: string;
  groups: number[];
  separators: string;
  plus: boolean;
  parens: boolean;
}

/** Reads digit groups joined by one separator each (space, `-`, `.`, or a `(…)` area code), from `start`. */
function digitRun(text: string, start: number): DigitRun {
  const run: DigitRun = { start, end: start, digits: '', groups: [], separators: '', plus: false, parens: false };
  let at = start;
  if (text[at] === '+') {
    run.plus = true;
    at += 1;
  }
  while (at < text.length && run.digits.length <= 24) {
    let open = false;
    if (text[at] === '(' && run.groups.length <= 1) {
      open = true;
      at += 1;
    }
    const n = runOf(text, at, DIGIT, 24);
    if (n === 0) break;
    run.digits += text.slice(at, at + n);
    run.groups.push(n);
    at += n;
    if (open) {
      if (text[at] !== ')') break;
      run.parens = true;
      at += 1;
    }
    run.end = at;
    const sep = text[at];
    if ((sep === ' ' || sep === '-' || sep === '.') && inClass(DIGIT, text.charCodeAt(at + 1))) {
      run.separators += sep;
      at += 1;
    } else if (sep === ' ' && text[at + 1] === '(') {
      run.separators += sep;
      at += 1;
    } else if (!(open && inClass(DIGIT, text.charCodeAt(at)))) break;
  }
  return run;
}

/** Whether the run stands alone: no letter, digit or joining punctuation right before or after it. */
function standsAlone(text: string, run: DigitRun): boolean {
  const before = run.start > 0 ? text.charCodeAt(run.start - 1) : 32;
  const after = run.end < text.length ? text.charCodeAt(run.end) : 32;
  const joins = (c: number) => inClass(ALNUM, c) || c === 95 || c === 45 || c === 47 || c === 43;
  // A dot after is a sentence's end unless a digit follows it (a version, a decimal).
  return !joins(before) && before !== 46 && !joins(after) && !(after === 46 && inClass(DIGIT, text.charCodeAt(run.end + 1)));
}

/** Payment card brands by their leading digits (IIN ranges of Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay). */
function cardBrand(digits: string): boolean {
  const two = Number(digits.slice(0, 2));
  const four = Number(digits.slice(0, 4));
  if (digits[0] === '4') return true;
  if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return digits.length === 16;
  if (two === 34 || two === 37) return digits.length === 15;
  if (digits.startsWith('6011') || two === 65 || (Number(digits.slice(0, 3)) >= 644 && Number(digits.slice(0, 3)) <= 649)) return true;
  return two === 35 || two === 36 || two === 38 || two === 30 || two === 62;
}

function ssnValid(groups: number[], digits: string, separators: string): boolean {
  if (groups.join() !== '3,2,4' || separators !== '--') return false;
  const area = Number(digits.slice(0, 3));
  return area !== 0 && area !== 666 && area < 900 && digits.slice(3, 5) !== '00' && digits.slice(5) !== '0000';
}

function phoneShaped(run: DigitRun): boolean {
  const n = run.digits.length;
  if (run.plus) return n >= 8 && n <= 15 && run.groups.length >= 2;
  // North American shape: (NXX) NXX-XXXX or NXX-NXX-XXXX (N is 2-9), separators required.
  const g = run.groups.join();
  const nanp = g === '3,3,4' || g === '1,3,3,4';
  if (!nanp || (!run.parens && run.separators.length < 2)) return false;
  const area = run.digits.length === 11 ? run.digits.slice(1) : run.digits;
  return area[0]! >= '2' && area[3]! >= '2' && (run.digits.length === 10 || run.digits[0] === '1') && (run.parens || new Set(run.separators).size === 1);
}

// NUMBER_CHARS (text.ts) as a bit mask over codes 32..63 (space to '?', where all of them lie): a shift and a test,
// no table load, in the hot loop.
const NUMBER_MASK = NUMBER_CHARS.subarray(32, 64).reduce((mask, member, at) => mask | (member << at), 0);
const isNumberChar = (code: number): boolean => code - 32 >>> 0 < 32 && ((NUMBER_MASK >>> (code - 32)) & 1) === 1;

/**
 * The first digit at or after `from` followed by eight number characters (a finding needs nine digits in one
 * run of number characters, so no shorter run holds one), or -1. Read like Boyer-Moore: a window's last
 * character is read first, and one that is not a number character rules out every start within the window, so
 * most of a text is passed over nine characters at a time (a regex tries each position; this reads each
 * character at most about twice). Linear in the text.
 */
export function nextDigitWindow(text: string, from: number): number {
  let p = from;
  // Characters in [p, known) are number characters already read.
  let known = from;
  while (p + 8 < text.length) {
    if (!isNumberChar(text.charCodeAt(p + 8))) {
      p += 9;
      known = p;
      continue;
    }
    let j = p + 7;
    while (j >= known && isNumberChar(text.charCodeAt(j))) j -= 1;
    if (j >= known) {
      known = p + 9;
      p = j + 1;
      continue;
    }
    const c = text.charCodeAt(p);
    if (c >= 48 && c <= 57) return p;
    p += 1;
    known = p + 8;
  }
  return -1;
}

/** Two capital letters and two digits: where an IBAN may start (fixed-length classes only, linear in V8's engine too; see text.ts). */
const IBAN_START = /[A-Z]{2}[0-9]{2}/g;

/** Digits in the run of number characters from `at`: a cheap count that skips most numbers without reading them twice. */
function digitsAhead(text: string, at: number): { digits: number; end: number } {
  let digits = 0;
  let end = at;
  while (end < text.length && digits < 25) {
    const c = text.charCodeAt(end);
    if (!isNumberChar(c)) break;
    if (c >= 48 && c <= 57) digits += 1;
    end += 1;
  }
  return { digits, end };
}

function numbers(text: string, out: Finding[], census?: Census): void {
  // The next candidate of each kind at or after the cursor, kept while the cursor has not passed it (the
  // cursor only moves forward): each search runs over the text once in all. No IBAN can start where the census
  // saw no country code followed by a digit, and no card, social security or phone number where it saw no nine
  // digits in one run of number characters: that search is skipped (a failed IBAN candidate never moves the
  // cursor past a digit candidate, so the other findings are the same).
  let digitAt = census && !census.nineDigits ? -1 : -2;
  let ibanStart = census && !mayHoldIban(census) ? -1 : -2;
  for (let from = 0; ; ) {
    if (digitAt !== -1 && digitAt < from) digitAt = nextDigitWindow(text, from);
    if (ibanStart !== -1 && ibanStart < from) {
      IBAN_START.lastIndex = from;
      ibanStart = IBAN_START.exec(text)?.index ?? -1;
    }
    if (digitAt < 0 && ibanStart < 0) return;
    if (ibanStart >= 0 && (digitAt < 0 || ibanStart < digitAt)) {
      // Two capital letters and two digits: an IBAN's country code and check digits, or nothing.
      const end = ibanAt(text, ibanStart, out);
      from = end > 0 ? end : ibanStart + 2;
      continue;
    }
    const first = digitAt;
    const before = text[first - 1];
    const at = before === '+' || before === '(' ? first - 1 : first;
    const ahead = digitsAhead(text, first);
    if (ahead.digits < 9) {
      from = ahead.end;
      continue;
    }
    const run = digitRun(text, at);
    from = Math.max(first + 1, run.end);
    if (!standsAlone(text, run) || run.digits.length < 9) continue;
    const n = run.digits.length;
    const uniform = new Set(run.separators).size <= 1;
    if (!run.plus && !run.parens && uniform && n >= 13 && n <= 19 && cardBrand(run.digits) && luhnValid(run.digits)) out.push({ kind: 'credit_card', start: run.start, end: run.end });
    else if (ssnValid(run.groups, run.digits, run.separators)) out.push({ kind: 'us_ssn', start: run.start, end: run.end });
    else if (phoneShaped(run)) out.push({ kind: 'phone', start: run.start, end: run.end });
  }
}

const UPPER = charClass('A-Z');
const IBAN_BODY = charClass('A-Z0-9');

/**
 * An IBAN starting at `at` (two capital letters, two digits), written whole or in groups of four
 * (`DE89 3704 0044 0532 0130 00`) and checked by mod-97: pushes it and answers its end, or answers -1.
 */
function ibanAt(text: string, at: number, out: Finding[]): number {
  if (at > 0 && inClass(ALNUM, text.charCodeAt(at - 1))) return -1;
  let end = at;
  let compact = '';
  while (compact.length < 34) {
    const n = runOf(text, end, IBAN_BODY, 34 - compact.length);
    if (n === 0) break;
    compact += text.slice(end, end + n);
    end += n;
    if (text[end] === ' ' && inClass(IBAN_BODY, text.charCodeAt(end + 1)) && n === 4) end += 1;
    else break;
  }
  // Grouped text may run into the next word: the country's length says where the IBAN ends.
  const expected = IBAN_LENGTHS[compact.slice(0, 2)];
  if (expected === undefined || compact.length < expected) return -1;
  if (compact.length > expected) {
    compact = compact.slice(0, expected);
    end = endAfter(text, at, expected);
  }
  if (end < text.length && inClass(ALNUM, text.charCodeAt(end))) return -1;
  if (!ibanValid(compact)) return -1;
  out.push({ kind: 'iban', start: at, end });
  return end;
}

/** Where the `count`-th IBAN character after `from` ends (spaces between groups skipped). */
function endAfter(text: string, from: number, count: number): number {
  let at = from;
  for (let seen = 0; seen < count; at += 1) if (text[at] !== ' ') seen += 1;
  return at;
}

/** The codes of the digits 0 to 9. */
const DIGIT_CODES = Array.from({ length: 10 }, (_, digit) => 48 + digit);
/** IBAN country codes by their second letter: for each, the first letters that go before it. */
const IBAN_FIRSTS = new Map<number, number[]>();
for (const code of Object.keys(IBAN_LENGTHS)) IBAN_FIRSTS.set(code.charCodeAt(1), [...(IBAN_FIRSTS.get(code.charCodeAt(1)) ?? []), code.charCodeAt(0)]);

/**
 * Whether an IBAN may start in the counted text: two capitals followed by two digits (census.wat sees them), and
 * a country code of IBAN_LENGTHS whose second letter is followed by a digit. One group per second letter: its
 * country codes first, then the letter followed by a digit.
 */
const IBAN_GATE = pairSet(
  [...IBAN_FIRSTS].map(([second, firsts]) => ({
    first: firsts.map((first) => pairAt(first, second)),
    rests: [[DIGIT_CODES.map((digit) => pairAt(second, digit))]],
  })),
);
const mayHoldIban = (census: Census): boolean => census.ibanShape && census.mayHold(IBAN_GATE);

export const PII_DETECTORS: readonly Detector[] = [
  { name: 'email', group: 'pii', kinds: ['email'], find: emails, gate: (census) => census.at },
  // One pass over the digits finds cards, SSNs, phones and IBANs (whose check digits follow the country code).
  // Cards, social security and phone numbers need nine digits in one run of number characters; an IBAN a country code.
  { name: 'numbers', group: 'pii', kinds: ['credit_card', 'us_ssn', 'phone', 'iban'], find: numbers, gate: (census) => census.digit && (census.nineDigits || mayHoldIban(census)) },
];
