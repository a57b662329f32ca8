// The census before the detectors (src/guardrails/census.ts): a gate may only skip a detector that would find
// nothing, so the findings with gates equal those of every detector run, on the corpus and on random texts built
// from its pieces; the bench's clean listing is read by no detector at all.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { literalsMayOccur, separateCensusTaker, takeCensus } from '../../../src/guardrails/census.js';
// @ts-expect-error: a script without types of its own
import { assembleCensus } from '../../../scripts/build-census-wasm.mjs';
import { ibanValid } from '../../../src/guardrails/checksums.js';
import { compileGuardrails } from '../../../src/guardrails/compile.js';
import { BUILTIN_DETECTORS, detect } from '../../../src/guardrails/detectors.js';
import { nothingToFind, scan } from '../../../src/guardrails/scan.js';
import type { Detector, Finding } from '../../../src/guardrails/types.js';

const corpus = JSON.parse(readFileSync(new URL('../../fixtures/guardrails/corpus.json', import.meta.url), 'utf8')) as {
  positives: Array<{ text: string }>;
  negatives: Array<{ text: string }>;
};
const texts = [...corpus.positives, ...corpus.negatives].map((sample) => sample.text);
const UNGATED: Detector[] = BUILTIN_DETECTORS.map(({ gate: _gate, ...detector }) => detector);

const findings = (detectors: readonly Detector[], text: string): Finding[] => {
  // Without gates no census is taken: every detector reads the whole text (the numbers detector its IBANs too).
  const out: Finding[] = [];
  detect(detectors, text, out);
  return out;
};

/** A valid IBAN without nine digits in a row: found by its country code, not by a run of digits. */
const LETTERED_IBAN = Array.from({ length: 97 }, (_, n) => `GB${String(n).padStart(2, '0')}ABCD1234ABCD1234AB`).find(ibanValid)!;

function randomTexts(count: number, seed: number): string[] {
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return Math.floor(seed / 65536) % n;
  };
  // Corpus texts, whole or cut at random places, joined by characters the detectors care about, some past ASCII
  // (the Kelvin sign lower-cases to `k`: `JAILBREA\u212a` is a phrase only once lower-cased).
  const joins = [' ', '\n', '"', ':', '=', '@', '-', '.', '(', ')', '+', '1', '9', '1234', '555-01', '4111 1111', 'A', 'Z', '://', 'é', '\u212a', '\u0130', '\u200b', '\ufeff', 'DE', 'GB82', 'JAILBREA\u212a', ` ${LETTERED_IBAN} `];
  const out: string[] = [];
  for (let i = 0; i < count; i += 1) {
    let text = '';
    for (let n = 1 + random(6); n > 0; n -= 1) {
      const source = texts[random(texts.length)]!;
      const from = random(source.length);
      let piece = random(2) === 0 ? source : source.slice(from, from + 1 + random(source.length - from));
      if (random(4) === 0) piece = random(2) === 0 ? piece.toUpperCase() : piece.toLowerCase();
      text += piece + joins[random(joins.length)]!.repeat(1 + random(3));
    }
    out.push(text);
  }
  return out;
}

/** Nine digits in one run of digits, spaces, dots, parentheses, pluses and dashes, read character by character. */
function nineInRun(text: string): boolean {
  let run = 0;
  for (const c of text) {
    if (c >= '0' && c <= '9') run += 1;
    else if (!' .()+-'.includes(c)) run = 0;
    if (run >= 9) return true;
  }
  return false;
}

describe('the census gates', () => {
  it('leave the findings as every detector run finds them, on the corpus and on 20,000 texts made of its pieces', () => {
    let found = 0;
    for (const text of [...texts, ...randomTexts(20_000, 11)]) {
      const expected = findings(UNGATED, text);
      expect(findings(BUILTIN_DETECTORS, text), text.slice(0, 80)).toEqual(expected);
      found += expected.length;
    }
    expect(found).toBeGreaterThan(5_000);
  });

  it('skip detectors on texts without what they need', () => {
    const skipped = (text: string) => BUILTIN_DETECTORS.filter((detector) => detector.gate && !detector.gate(takeCensus(text))).map((detector) => detector.name);
    const listing = JSON.stringify({ items: [{ id: 1000, name: 'Item number 0', url: 'https://shop.example.com/items/1000', price: 12.5, updated: '2026-12-01T10:00:00Z' }], next: null });
    // No detector reads the listing: it has digits, but never nine in one run of number characters, nor a country code.
    expect(skipped(listing)).toEqual(BUILTIN_DETECTORS.map((detector) => detector.name));
    expect(skipped('no digits here')).toContain('numbers');
    // Nine digits in one run of digits, spaces, dots, dashes, parentheses and pluses: the numbers detector reads it.
    for (const run of ['123456789', '+1 (555) 010-99', '4111 1111 1', '078-05-1120', '1.2.3.4.5.6.7.8.9']) {
      expect(skipped(`${listing} ${run}`), run).not.toContain('numbers');
      expect(skipped(`${listing}${'é'.repeat(3)}${run}é`), run).not.toContain('numbers');
    }
    // Eight, or nine split by another character: not read.
    for (const run of ['12345678', '1234-5678', '1234/56789', '12345678x9', '1234\u00a056789']) expect(skipped(`${listing} ${run}`), run).toContain('numbers');
    // An `@` lets the e-mail detector run; a character past ASCII the injection ones.
    expect(skipped(`${listing} a@b.example`)).not.toContain('email');
    expect(skipped(`${listing} café`)).not.toContain('hidden_text');
    expect(skipped(`${listing} café`)).not.toContain('injection_phrases');
  });

  it('never rule out a literal that is there, in any case, wherever it lies', () => {
    const literals = ['ignore previous', '<|im_start|>', 'sk_live_', 'AKIA', '-----BEGIN '];
    const mayOccur = literalsMayOccur(literals);
    for (const text of randomTexts(2_000, 5)) {
      const at = text.length >> 1;
      for (const literal of literals) {
        for (const written of [literal, literal.toUpperCase(), literal.toLowerCase()]) expect(mayOccur(takeCensus(text.slice(0, at) + written + text.slice(at)))).toBe(true);
      }
    }
    expect(mayOccur(takeCensus('sk live akla'))).toBe(false);
  });

  it('rule nothing out by pairs past the bytes a census counts (64 KiB)', () => {
    const padding = 'x'.repeat(64 * 1024);
    for (const text of texts) expect(findings(BUILTIN_DETECTORS, padding + text)).toEqual(findings(UNGATED, padding + text));
  });

  it('count the same pairs in WebAssembly as in JavaScript, and the runs of digits and IBAN starts, as the texts hold them', () => {
    const wasm = separateCensusTaker('wasm');
    const script = separateCensusTaker('script');
    const ascii = (text: string) => [...text].every((c) => c.charCodeAt(0) < 128);
    for (const text of [...texts, ...randomTexts(600, 17), '', '1', '12345678', '123456789', '1234 5678 9', '1234-5678x9']) {
      const fromWasm = wasm(text);
      expect(fromWasm.nineDigits, text.slice(0, 80)).toBe(nineInRun(text));
      // The script pass counts no runs: it lets every text with a digit through.
      const fromScript = script(text);
      expect(fromScript.nineDigits).toBe(fromScript.digit);
      // Every pair of printable characters, as one string per pass (one comparison per text).
      const seen = (census: ReturnType<typeof wasm>) => {
        let out = '';
        for (let first = 32; first < 127; first += 1) for (let second = 32; second < 127; second += 1) out += census.pair(first, second) ? '1' : '0';
        return out;
      };
      const pairs = seen(fromWasm);
      expect(pairs === seen(script(text)), text.slice(0, 80)).toBe(true);
      if (ascii(text)) {
        // The census folds a letter to its low five bits and any other character to its low six; the last
        // character pairs with the NUL after the text, and the pair (0, 0) is always seen.
        const fold = (code: number) => (/[a-z]/i.test(String.fromCharCode(code)) ? code & 31 : code & 63);
        const held = new Set<number>([0]);
        for (let i = 0; i < text.length; i += 1) held.add(fold(text.charCodeAt(i)) * 64 + (i + 1 < text.length ? fold(text.charCodeAt(i + 1)) : 0));
        let expected = '';
        for (let first = 32; first < 127; first += 1) for (let second = 32; second < 127; second += 1) expected += held.has(fold(first) * 64 + fold(second)) ? '1' : '0';
        expect(pairs === expected, text.slice(0, 80)).toBe(true);
      }
      // Two capitals followed by two digits: an IBAN's start.
      expect(fromWasm.ibanShape, text.slice(0, 80)).toBe(/[A-Z]{2}[0-9]{2}/.test(text));
      expect(fromScript.ibanShape).toBe(fromScript.digit);
    }
  });

  it('run the WebAssembly assembled from census.wat (node scripts/build-census-wasm.mjs after a change)', async () => {
    expect(readFileSync(new URL('../../../src/guardrails/census-wasm.ts', import.meta.url), 'utf8')).toBe(await assembleCensus());
  });

  it("find nine digits in a run wherever it lies against the WebAssembly pass's blocks of sixteen bytes", () => {
    const wasm = separateCensusTaker('wasm');
    // Short texts of digits, separators and other characters (one past ASCII: two bytes), so runs start, end and
    // cross every place in a block: inside one, over one edge or several, after a carried run.
    const pieces = ['1', '1', '1', '1', '22', '333', ' ', '-', '.', '(', ')', '+', 'x', '"', 'é', '/', 'A', 'Z', 'GB'];
    let seed = 23;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.floor(seed / 65536) % n;
    };
    let found = 0;
    for (let i = 0; i < 20_000; i += 1) {
      let text = 'x'.repeat(random(17));
      for (let n = random(40); n > 0; n -= 1) text += pieces[random(pieces.length)]!;
      const expected = nineInRun(text);
      const census = wasm(text);
      expect(census.nineDigits, JSON.stringify(text)).toBe(expected);
      expect(census.ibanShape, JSON.stringify(text)).toBe(/[A-Z]{2}[0-9]{2}/.test(text));
      if (expected) found += 1;
    }
    expect(found).toBeGreaterThan(1_000);
    // Nine digits between two other characters inside one block, at each offset; eight never.
    for (let offset = 0; offset < 16; offset += 1) {
      const pad = 'x'.repeat(offset);
      expect(wasm(`${pad}x1234 56789x`).nineDigits, `offset ${offset}`).toBe(true);
      expect(wasm(`${pad}x1234 5678x9`).nineDigits, `offset ${offset}`).toBe(false);
      expect(wasm(`${pad}12x345678x9`).nineDigits, `offset ${offset}`).toBe(false);
      // A run cut by a block of letters alone, or carried through a block of separators alone.
      expect(wasm(`${pad}12345${'x'.repeat(16)}6789`).nineDigits, `offset ${offset}`).toBe(false);
      expect(wasm(`${pad}12345${' - '.repeat(7)}6789`).nineDigits, `offset ${offset}`).toBe(true);
      // An IBAN's start across every place in a block; three of its four characters never.
      expect(wasm(`${pad}x DE89 x 1`).ibanShape, `offset ${offset}`).toBe(true);
      expect(wasm(`${pad}x De89 xDE8x 1`).ibanShape, `offset ${offset}`).toBe(false);
    }
  });

  it('run every gate alike in WebAssembly and in JavaScript', () => {
    const wasm = separateCensusTaker('wasm');
    const script = separateCensusTaker('script');
    // The numbers gate reads the run of digits, which only the WebAssembly pass counts; the others read pairs.
    const gated = BUILTIN_DETECTORS.filter((detector) => detector.gate && detector.name !== 'numbers');
    let passed = 0;
    for (const text of [...texts, ...randomTexts(3_000, 29)]) {
      const fromWasm = wasm(text);
      const inWasm = gated.map((detector) => detector.gate!(fromWasm));
      const fromScript = script(text);
      expect(gated.map((detector) => detector.gate!(fromScript)), text.slice(0, 80)).toEqual(inWasm);
      passed += inWasm.filter(Boolean).length;
    }
    expect(passed).toBeGreaterThan(1_000);
  });

  it('say a text holds nothing to find only when a scan of it finds nothing (the policy then skips the scan)', () => {
    // The bench's rules, with a custom detector in a rule of its own (no gate: its rule may always find).
    const guardrails = compileGuardrails([
      { tools: ['*'], on: 'result', detect: ['secrets', 'pii'], action: 'mask' },
      { tools: ['*'], on: 'result', detect: ['injection'], action: 'flag' },
    ])!;
    const rules = guardrails.rulesFor('any', 'result');
    const withCustom = compileGuardrails({ rules: [{ detect: ['secrets'], action: 'mask' }, { detect: ['ticket'], action: 'flag' }], detectors: { ticket: { pattern: 'TICKET-[0-9]+' } } })!;
    const listing = JSON.stringify({ items: Array.from({ length: 12 }, (_, i) => ({ id: 1000 + i, name: `Item number ${i}`, url: `https://shop.example.com/items/${1000 + i}`, price: 12.5, updated: '2026-12-01T10:00:00Z' })), next: null });
    // Listings of other shapes (mostly clean), and texts made of the corpus's pieces (mostly not).
    const listings = Array.from({ length: 500 }, (_, n) =>
      JSON.stringify({ seq: n * 7919, items: Array.from({ length: 4 + (n % 9) }, (_, i) => ({ id: n * 31 + i, sku: `SKU-${(n * 17 + i) % 100_000}`, note: i % 3 === 0 ? 'ships in 2-3 days' : 'in stock', price: ((n + i) % 977) / 10, at: `2026-${String((n % 12) + 1).padStart(2, '0')}-0${(i % 9) + 1}` })) }),
    );
    let clean = 0;
    for (const text of [listing, ...listings, ...texts, ...randomTexts(3_000, 31)]) {
      const outcome = scan({ direction: 'result', surfaces: [{ value: text, selectable: false }], rules, limits: guardrails.limits, hashKey: guardrails.hashKey('t') });
      if (outcome instanceof Promise) throw new Error('a small text is scanned at once');
      if (nothingToFind(text, rules, guardrails.limits)) {
        clean += 1;
        expect(outcome.kind, text.slice(0, 80)).toBe('scanned');
        expect(outcome.events, text.slice(0, 80)).toEqual([]);
        expect(outcome.kind === 'scanned' && outcome.values.every((value) => value === undefined)).toBe(true);
      }
    }
    expect(clean).toBeGreaterThan(400);
    expect(nothingToFind(listing, rules, guardrails.limits)).toBe(true);
    // A rule the census cannot rule out, a short text, one long enough for a scan's clock: the scan decides.
    expect(nothingToFind(listing, withCustom.rulesFor('any', 'result'), withCustom.limits)).toBe(false);
    expect(nothingToFind('{"id": 1}', rules, guardrails.limits)).toBe(false);
    expect(nothingToFind(listing.repeat(Math.ceil((16 * 1024) / listing.length)), rules, guardrails.limits)).toBe(false);
  });
});
