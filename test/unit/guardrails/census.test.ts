// The census before the detectors (src/guardrails/census.ts): a gate may only skip a detector that would find
// nothing, so the findings with gates equal those of every detector run, on the corpus and on random texts built
// from its pieces; the bench's clean listing is read by no detector at all.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { literalsMayOccur, separateCensusTaker, takeCensus } from '../../../src/guardrails/census.js';
// @ts-expect-error: a script without types of its own
import { assembleCensus } from '../../../scripts/build-census-wasm.mjs';
import { ibanValid } from '../../../src/guardrails/checksums.js';
import { BUILTIN_DETECTORS, detect } from '../../../src/guardrails/detectors.js';
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
    const folded = literalsMayOccur(literals, true);
    const exact = literalsMayOccur(literals);
    for (const text of randomTexts(2_000, 5)) {
      const at = text.length >> 1;
      for (const literal of literals) {
        expect(exact(takeCensus(text.slice(0, at) + literal + text.slice(at)))).toBe(true);
        expect(folded(takeCensus(text.slice(0, at) + literal.toUpperCase() + text.slice(at)))).toBe(true);
      }
    }
    expect(exact(takeCensus('sk live akia'))).toBe(false);
  });

  it('rule nothing out by pairs past the bytes a census counts (64 KiB)', () => {
    const padding = 'x'.repeat(64 * 1024);
    for (const text of texts) expect(findings(BUILTIN_DETECTORS, padding + text)).toEqual(findings(UNGATED, padding + text));
  });

  it('count the same pairs and runs of digits in WebAssembly as in JavaScript, as the texts hold them', () => {
    const wasm = separateCensusTaker('wasm');
    const script = separateCensusTaker('script');
    /** Nine digits in one run of digits, spaces, dots, parentheses, pluses and dashes, read character by character. */
    const nineInRun = (text: string): boolean => {
      let run = 0;
      for (const c of text) {
        if (c >= '0' && c <= '9') run += 1;
        else if (!' .()+-'.includes(c)) run = 0;
        if (run >= 9) return true;
      }
      return false;
    };
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
        let expected = '';
        for (let first = 32; first < 127; first += 1) for (let second = 32; second < 127; second += 1) expected += text.includes(String.fromCharCode(first, second)) ? '1' : '0';
        expect(pairs === expected, text.slice(0, 80)).toBe(true);
      }
    }
  });

  it('run the WebAssembly assembled from census.wat (node scripts/build-census-wasm.mjs after a change)', async () => {
    expect(readFileSync(new URL('../../../src/guardrails/census-wasm.ts', import.meta.url), 'utf8')).toBe(await assembleCensus());
  });
});
