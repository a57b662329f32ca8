// The labelled corpus (test/fixtures/guardrails/corpus.json): secrets, personal data and injected
// instructions that must be found, and look-alikes that must not (UUIDs, git SHAs, hashes, base64 images,
// cards with a bad Luhn, code, placeholders). Prints precision and recall per detector kind and fails below
// the floors documented in docs/governance.md#measured-accuracy.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BUILTIN_DETECTORS, detect } from '../../../src/guardrails/detectors.js';
import { injectionScore } from '../../../src/guardrails/injection.js';
import type { Finding } from '../../../src/guardrails/types.js';

interface Sample {
  text: string;
  expect: string[];
  note?: string;
}
const corpus = JSON.parse(readFileSync(new URL('../../fixtures/guardrails/corpus.json', import.meta.url), 'utf8')) as { positives: Sample[]; negatives: Sample[] };

/** The floors of docs/governance.md#measured-accuracy, per kind: precision and recall over this corpus. */
export const FLOORS = { precision: 0.95, recall: 0.95 };
/** Injection is a score, and phrasing varies more: its floors are lower. */
const INJECTION_FLOORS = { precision: 0.9, recall: 0.9 };

function kindsIn(text: string): Set<string> {
  const findings: Finding[] = [];
  detect(BUILTIN_DETECTORS, text, findings);
  const kinds = new Set(findings.filter((f) => f.kind !== 'injection').map((f) => f.kind));
  if (injectionScore(findings) >= 0.5) kinds.add('injection');
  return kinds;
}

describe('the guardrails corpus', () => {
  const samples = [...corpus.positives, ...corpus.negatives];
  const tally = new Map<string, { tp: number; fp: number; fn: number }>();
  const misses: string[] = [];
  for (const sample of samples) {
    const found = kindsIn(sample.text);
    const expected = new Set(sample.expect);
    for (const kind of new Set([...found, ...expected])) {
      const t = tally.get(kind) ?? { tp: 0, fp: 0, fn: 0 };
      if (found.has(kind) && expected.has(kind)) t.tp += 1;
      else if (found.has(kind)) {
        t.fp += 1;
        misses.push(`false positive ${kind}: ${sample.note ?? sample.text.slice(0, 60)}`);
      } else {
        t.fn += 1;
        misses.push(`missed ${kind}: ${sample.text.slice(0, 60)}`);
      }
      tally.set(kind, t);
    }
  }
  const rows = [...tally].sort(([a], [b]) => a.localeCompare(b)).map(([kind, t]) => ({
    kind,
    precision: t.tp + t.fp === 0 ? 1 : t.tp / (t.tp + t.fp),
    recall: t.tp + t.fn === 0 ? 1 : t.tp / (t.tp + t.fn),
    ...t,
  }));

  it('holds every detector kind at or above its documented precision and recall floors', () => {
    console.log(`guardrails corpus: ${corpus.positives.length} positives, ${corpus.negatives.length} look-alikes`);
    console.table(rows.map((row) => ({ ...row, precision: row.precision.toFixed(3), recall: row.recall.toFixed(3) })));
    if (misses.length > 0) console.log(misses.join('\n'));
    for (const row of rows) {
      const floors = row.kind === 'injection' ? INJECTION_FLOORS : FLOORS;
      expect(row.precision, `${row.kind} precision`).toBeGreaterThanOrEqual(floors.precision);
      expect(row.recall, `${row.kind} recall`).toBeGreaterThanOrEqual(floors.recall);
    }
  });

  it('finds nothing at all in the look-alikes', () => {
    const found = corpus.negatives.map((sample) => ({ note: sample.note, kinds: [...kindsIn(sample.text)] })).filter((row) => row.kinds.length > 0);
    expect(found).toEqual([]);
  });

  it('covers every built-in kind with positives', () => {
    const covered = new Set(corpus.positives.flatMap((sample) => sample.expect));
    for (const detector of BUILTIN_DETECTORS) for (const kind of detector.kinds) expect(covered, kind).toContain(kind);
  });
});
