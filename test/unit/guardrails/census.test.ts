// The census before the detectors (src/guardrails/census.ts): a gate may only skip a detector that would find
// nothing, so the findings with gates equal those of every detector run, on the corpus and on random texts built
// from its pieces; the bench's clean listing is read by no detector at all.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { literalsMayOccur, takeCensus } from '../../../src/guardrails/census.js';
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
  const joins = [' ', '\n', '"', ':', '=', '@', '-', '.', '(', ')', '+', '1', '9', 'A', 'Z', '://', 'é', '\u212a', '\u0130', '\u200b', '\ufeff', 'DE', 'GB82', 'JAILBREA\u212a', ` ${LETTERED_IBAN} `];
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
    // Only the numbers detector reads the listing (it has digits), without its IBAN search.
    expect(skipped(listing)).toEqual(BUILTIN_DETECTORS.map((detector) => detector.name).filter((name) => name !== 'numbers'));
    expect(skipped('no digits here')).toContain('numbers');
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
});
