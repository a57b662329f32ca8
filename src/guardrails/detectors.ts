// Every detector a rule can name: the built-in ones (secrets, personal data, injection) and the
// operator's custom ones, compiled for the linear-time engine (src/patterns/).
import { compileLinear, isRefusal, MatchBudgetError, MAX_MATCH_WORK, type LinearRegex } from '../patterns/linear-regex.js';
import type { CustomDetectorConfig } from '../config/guardrails.js';
import { FRESH_CENSUS, type Census, type CensusSource } from './census.js';
import { INJECTION_DETECTORS } from './injection.js';
import { PII_DETECTORS } from './pii.js';
import { SECRET_DETECTORS } from './secrets.js';
import { keywordFinder } from './text.js';
import { DETECTOR_GROUPS, type Detector, type Finding } from './types.js';

export const BUILTIN_DETECTORS: readonly Detector[] = [...SECRET_DETECTORS, ...PII_DETECTORS, ...INJECTION_DETECTORS];

/** Every built-in kind, by group (the docs' list and the metric's `detector` label set, with `field` and `custom`). */
export const BUILTIN_KINDS: ReadonlySet<string> = new Set(BUILTIN_DETECTORS.flatMap((detector) => detector.kinds));

/** Shorter texts are read by every detector: a census's fixed cost (the encoder, three searches) is about theirs there. */
const MIN_CENSUS_CHARS = 256;

/** Kinds that give way to a more specific finding over the same characters (a token's own rule, a URL's password). */
const GENERIC_KINDS = new Set(['generic_secret', 'bearer_token']);

/**
 * Runs the detectors over `text` into `out`, dropping a generic finding that overlaps a specific one
 * (`api_key = "sk_live_…"` is a stripe_key, not also a generic_secret). A detector whose gate rules the text out
 * is not run (texts of MIN_CENSUS_CHARS or more); `censuses` gives the text's census (a scan reuses it across
 * rules), taken once at most.
 */
export function detect(detectors: readonly Detector[], text: string, out: Finding[], censuses: CensusSource = FRESH_CENSUS): void {
  const from = out.length;
  const gated = text.length >= MIN_CENSUS_CHARS;
  let census: Census | undefined;
  for (const detector of detectors) {
    if (gated && detector.gate && !detector.gate((census ??= censuses.census(text)))) continue;
    detector.find(text, out, census);
  }
  if (out.length - from < 2) return;
  const found = out.splice(from);
  const specific = found.filter((finding) => !GENERIC_KINDS.has(finding.kind));
  for (const finding of found) {
    if (GENERIC_KINDS.has(finding.kind) && specific.some((other) => other.start < finding.end && finding.start < other.end)) continue;
    out.push(finding);
  }
}

/**
 * Whether `detect` may find something in `text`: false only when the text is long enough to be counted and every
 * detector's gate rules it out (a detector without a gate, such as a custom one, always may).
 */
export function mayFind(detectors: readonly Detector[], text: string, censuses: CensusSource = FRESH_CENSUS): boolean {
  if (text.length < MIN_CENSUS_CHARS) return detectors.length > 0;
  let census: Census | undefined;
  for (const detector of detectors) if (!detector.gate || detector.gate((census ??= censuses.census(text)))) return true;
  return false;
}

/** Windows a pattern without keywords is run over: long enough to amortise a search, short enough to bound its work. */
const WINDOW_CHARS = 4096;

/** A custom detector: its pattern around each keyword, or over overlapping windows of the text. */
export function customDetector(name: string, config: CustomDetectorConfig): Detector {
  if (BUILTIN_KINDS.has(name) || (DETECTOR_GROUPS as readonly string[]).includes(name)) throw new Error(`${name} is the name of a built-in detector`);
  const compiled = compileLinear(`${config.caseInsensitive === true ? '(?i)' : ''}${config.pattern}`, 're2');
  if (isRefusal(compiled)) throw new Error(`the pattern cannot be used: ${compiled.reason}`);
  const regex: LinearRegex = compiled;
  const span = config.maxMatchChars ?? 256;
  const search = (text: string, from: number, to: number, out: Finding[], covering?: number): number => {
    const window = text.slice(from, to);
    let at = 0;
    let end = from;
    while (at <= window.length) {
      let match;
      try {
        match = regex.find(window, at);
      } catch (error) {
        if (error instanceof MatchBudgetError) return end;
        throw error;
      }
      if (!match) break;
      if (match.end - match.start <= span && match.end > match.start && (covering === undefined || (match.start + from <= covering && match.end + from > covering))) {
        out.push({ kind: name, start: from + match.start, end: from + match.end });
        end = from + match.end;
      }
      at = Math.max(match.end, match.start + 1);
    }
    return end;
  };
  if (config.keywords) {
    const findKeyword = keywordFinder(config.keywords, config.caseInsensitive === true);
    return {
      name,
      group: 'custom',
      kinds: [name],
      find: (text, out) => findKeyword(text, (index) => search(text, Math.max(0, index - span), Math.min(text.length, index + span), out, index)),
    };
  }
  // A window holds at least two of the longest match; the engine bounds a search's work by program size × input.
  const window = Math.min(WINDOW_CHARS, Math.floor(MAX_MATCH_WORK / regex.programSize) - 1);
  if (window < span * 2) throw new Error(`the pattern is too complex for maxMatchChars ${span} (at most ${Math.floor(window / 2)})`);
  return {
    name,
    group: 'custom',
    kinds: [name],
    find: (text, out) => {
      // Overlapping windows (by the longest match) so a match across a window's edge is still found, once.
      let seen = 0;
      for (let from = 0; from < text.length; from += window - span) {
        const before = out.length;
        search(text, from, Math.min(text.length, from + window), out);
        for (let i = out.length - 1; i >= before; i -= 1) if (out[i]!.start < seen) out.splice(i, 1);
        if (out.length > before) seen = out[out.length - 1]!.end;
        if (from + window >= text.length) break;
      }
    },
  };
}
