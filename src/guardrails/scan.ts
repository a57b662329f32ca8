// Scanning one side of a call (docs/governance.md#guardrails): the texts and string fields of its surfaces
// (arguments; a result's output, error, trace and MCP content) run through each rule in config order.
// A `block` ends the scan; `mask` and `hash` rewrite what later rules and the caller see; `flag` only
// counts. Bounded: the characters and the scanner's own time per call and side; long texts are scanned
// in chunks with a yield between them, so one tenant's 10 MiB result never holds the event loop.
import { createHmac } from 'node:crypto';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { GuardrailLimits } from '../config/guardrails.js';
import { keptCensus, type Census, type CensusSource, type KeptCensus } from './census.js';
import type { CompiledRule } from './compile.js';
import { detect, mayFind } from './detectors.js';
import { injectionScore } from './injection.js';
import { selectPlaces, type Segment } from './json-path.js';
import type { Direction, Finding, GuardrailAction, GuardrailEvent } from './types.js';

type Key = string | number;
type Container = Record<string, unknown> | unknown[];

/** One thing to scan: a text, or a structured value whose string fields are scanned (`selectable`: rules' `fields` apply). */
export interface Surface {
  readonly value: unknown;
  readonly selectable: boolean;
  /** Fields never read (an MCP block's base64 `data` and `blob`: binary, not text a model reads). */
  readonly skipKeys?: ReadonlySet<string>;
}

export interface ScanRequest {
  readonly direction: Direction;
  readonly surfaces: readonly Surface[];
  readonly rules: readonly CompiledRule[];
  readonly limits: GuardrailLimits;
  readonly hashKey: Buffer;
  /** Scanning stops (as blocked) once this is aborted: the call was cancelled or timed out. */
  readonly cancellation?: { readonly aborted: boolean };
  /** A census the caller already took (nothingToFind's): reused for the same text while no other was taken since. */
  readonly checked?: KeptCensus;
}

export type ScanOutcome =
  | { readonly kind: 'blocked'; readonly kinds: readonly string[]; readonly events: readonly GuardrailEvent[] }
  /** `values[i]`: the rewritten surface i, or undefined when unchanged. `unscanned`: past a bound and passed as configured. */
  | { readonly kind: 'scanned'; readonly values: readonly unknown[]; readonly events: readonly GuardrailEvent[]; readonly unscanned?: 'oversize' | 'timeout' };

/** Texts longer than this are scanned in chunks, with a turn of the event loop between chunks. */
export const CHUNK_CHARS = 256 * 1024;
/** Chunks overlap by the longest finding a built-in detector reports (a PEM key), so none is cut in two. */
const CHUNK_OVERLAP = 17 * 1024;
const MAX_DEPTH = 128;
/** The scanner's own time is read after every this many characters scanned and before each turn of the event loop:
 * a clock read costs as many instructions as scanning several hundred characters, and a small result is read in
 * less than a millisecond. */
const CLOCK_CHARS = 16 * 1024;

/** The path of a surface's own value. */
const ROOT: readonly Key[] = Object.freeze([]);

interface Leaf {
  readonly surface: number;
  readonly path: readonly Key[];
}

class Document {
  readonly leaves: Leaf[] = [];
  readonly texts: string[] = [];
  /** Whole subtrees a fields rule replaced: surface → path. */
  readonly replaced: Array<{ surface: number; path: readonly Key[]; value: string }> = [];
  chars = 0;
  tooDeep = false;
  /** Where each object or array lies (for rules' `fields`); none for surfaces that are texts, the common case. */
  private paths: Map<object, { surface: number; path: readonly Key[]; from: number; to: number }> | undefined;

  constructor(readonly surfaces: readonly Surface[]) {
    for (let index = 0; index < surfaces.length; index += 1) {
      const { value } = surfaces[index]!;
      // A surface that is a text (a tool's output, most often): one leaf with the empty path, one shared, never written.
      if (typeof value === 'string') this.leaf(index, ROOT, value);
      else {
        this.paths ??= new Map();
        this.walk(value, index, ROOT, 0, surfaces[index]!.skipKeys);
      }
    }
  }

  private leaf(surface: number, path: readonly Key[], text: string): void {
    this.leaves.push({ surface, path });
    this.texts.push(text);
    this.chars += text.length;
  }

  private walk(value: unknown, surface: number, path: readonly Key[], depth: number, skip: ReadonlySet<string> | undefined): void {
    if (typeof value === 'string') {
      this.leaf(surface, path.length === 0 ? ROOT : [...path], value);
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    if (depth > MAX_DEPTH) {
      this.tooDeep = true;
      return;
    }
    const from = this.leaves.length;
    const entry = { surface, path: [...path], from, to: from };
    this.paths?.set(value, entry);
    if (Array.isArray(value)) value.forEach((item, i) => this.walk(item, surface, [...path, i], depth + 1, skip));
    else for (const key of Object.keys(value)) if (!skip?.has(key)) this.walk((value as Record<string, unknown>)[key], surface, [...path, key], depth + 1, skip);
    entry.to = this.leaves.length;
  }

  /** The leaves under each place the selectors pick, and the places themselves. */
  select(selectors: ReadonlyArray<readonly Segment[]>): Array<{ surface: number; path: Key[]; from: number; to: number; leaf: boolean }> {
    const places: Array<{ surface: number; path: Key[]; from: number; to: number; leaf: boolean }> = [];
    this.surfaces.forEach((surface, index) => {
      if (!surface.selectable || typeof surface.value !== 'object' || surface.value === null) return;
      for (const segments of selectors) {
        selectPlaces(surface.value, segments, (container: Container, key: Key) => {
          const parent = this.paths?.get(container);
          if (!parent) return;
          const path = [...parent.path, key];
          const child = (container as Record<Key, unknown>)[key];
          if (typeof child === 'string') {
            const at = this.leafAt(index, path, parent.from, parent.to);
            if (at >= 0) places.push({ surface: index, path, from: at, to: at + 1, leaf: true });
          } else if (typeof child === 'object' && child !== null) {
            const own = this.paths?.get(child);
            if (own) places.push({ surface: index, path, from: own.from, to: own.to, leaf: false });
          } else if (child !== undefined) places.push({ surface: index, path, from: 0, to: 0, leaf: false });
        });
      }
    });
    return places;
  }

  private leafAt(surface: number, path: readonly Key[], from: number, to: number): number {
    for (let i = from; i < to; i += 1) {
      const leaf = this.leaves[i]!;
      if (leaf.surface === surface && leaf.path.length === path.length && leaf.path.every((key, k) => key === path[k])) return i;
    }
    return -1;
  }
}

/** Merges overlapping findings (the first one's kind wins) in text order. */
function spans(findings: readonly Finding[]): Finding[] {
  const sorted = [...findings].sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: Finding[] = [];
  for (const finding of sorted) {
    const last = merged[merged.length - 1];
    if (last && finding.start < last.end) {
      if (finding.end > last.end) merged[merged.length - 1] = { kind: last.kind, start: last.start, end: finding.end };
    } else merged.push(finding);
  }
  return merged;
}

export const maskOf = (kind: string): string => `[REDACTED:${kind}]`;
export const hashOf = (key: Buffer, kind: string, value: string): string => `[HASH:${kind}:${createHmac('sha256', key).update(value).digest('hex').slice(0, 16)}]`;

function rewrite(text: string, findings: readonly Finding[], action: GuardrailAction, key: Buffer): string {
  let out = '';
  let at = 0;
  for (const finding of spans(findings)) {
    out += text.slice(at, finding.start) + (action === 'hash' ? hashOf(key, finding.kind, text.slice(finding.start, finding.end)) : maskOf(finding.kind));
    at = finding.end;
  }
  return out + text.slice(at);
}

function setAt(root: unknown, path: readonly Key[], value: unknown): unknown {
  if (path.length === 0) return value;
  let node = root as Record<Key, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<Key, unknown>;
  node[path[path.length - 1]!] = value;
  return root;
}

/** What a clean scan reports: one list for every scan (the policy and the audit only read it). */
const NO_EVENTS: readonly GuardrailEvent[] = Object.freeze([]);

/** A clean scan's outcome, one per number of surfaces (frozen, shared: nothing to allocate for the common case). */
const CLEAN: ScanOutcome[] = [];
function cleanOutcome(surfaces: number): ScanOutcome {
  return (CLEAN[surfaces] ??= Object.freeze({ kind: 'scanned', values: Object.freeze(new Array<undefined>(surfaces).fill(undefined)), events: NO_EVENTS }));
}

/**
 * The findings of the text being read, on the synchronous path: judged before anything else can scan, and
 * emptied after (only when something was found: setting an array's length goes through V8's runtime).
 */
const scratch: Finding[] = [];

class Events {
  /** Made at the first event: most scans find nothing. */
  private counts: Map<string, { detector: string; action: GuardrailEvent['action']; count: number; score?: number }> | undefined;
  constructor(private readonly direction: Direction) {}
  add(detector: string, action: GuardrailEvent['action'], count: number, score?: number): void {
    const counts = (this.counts ??= new Map());
    const key = `${detector}\u0000${action}`;
    const entry = counts.get(key) ?? { detector, action, count: 0 };
    entry.count += count;
    if (score !== undefined) entry.score = Math.max(entry.score ?? 0, score);
    counts.set(key, entry);
  }
  list(): readonly GuardrailEvent[] {
    if (!this.counts) return NO_EVENTS;
    return [...this.counts.values()].map((entry) => ({ direction: this.direction, ...entry }));
  }
}

/**
 * Scans the surfaces with each rule in order and returns what to do; never returns matched text. The outcome
 * comes back at once (no promise) when nothing needed a turn of the event loop: a small result, the common
 * case, costs its caller no await of its own.
 */
export function scan(request: ScanRequest): ScanOutcome | Promise<ScanOutcome> {
  return new Scanner(request).run();
}

/**
 * A census kept for one text: the clean-text check's, handed on to the scan of the same call, which then takes no
 * second census of a text the check already counted (the shared census's generation says whether it still holds).
 */
export class CheckedCensus implements KeptCensus, CensusSource {
  censusText: string | undefined = undefined;
  censusGeneration = -1;
  census(text: string): Census {
    return keptCensus(text, this);
  }
}

/**
 * Whether no rule can find anything in `text`, a side's only surface: each rule's detectors are ruled out by the
 * text's census (scanning it would change nothing, count nothing and need no turn of the event loop). False when
 * unsure: a rule selecting fields, a detector without a gate, a text too short to be counted, or one long enough
 * for a scan to read its clock (so the answer is the scan's, whatever the bounds). The census it took is kept in
 * `checked` for the scan that follows.
 */
export function nothingToFind(text: string, rules: readonly CompiledRule[], limits: GuardrailLimits, checked: CheckedCensus = new CheckedCensus()): boolean {
  if (text.length >= CLOCK_CHARS || text.length > limits.maxScanChars) return false;
  for (const rule of rules) if (rule.fields !== undefined || mayFind(rule.detectors, text, checked)) return false;
  return true;
}

/** One scan's state: the texts, the events, the time and characters read since the clock and the last yield. */
class Scanner implements CensusSource, KeptCensus {
  private readonly events: Events;
  private readonly doc: Document;
  /** The texts as they were, kept at the first rewrite (until then the texts are the originals). */
  private original: string[] | undefined;
  private spentMs = 0;
  /** Time since `mark` is the scanner's own but not yet in spentMs. */
  private mark = 0;
  private sinceClock = 0;
  private sinceYield = 0;
  /** One census per text for all the rules (a rewritten text gets its own): the text counted last, and when. */
  censusText: string | undefined = undefined;
  censusGeneration = -1;
  /** The current rule's leaves when it selects fields (undefined: every text). */
  private leaves: number[] | undefined;

  constructor(private readonly request: ScanRequest) {
    if (request.checked) {
      this.censusText = request.checked.censusText;
      this.censusGeneration = request.checked.censusGeneration;
    }
    this.events = new Events(request.direction);
    this.doc = new Document(request.surfaces);
  }

  census(text: string): Census {
    return keptCensus(text, this);
  }

  run(): ScanOutcome | Promise<ScanOutcome> {
    if (this.doc.chars > this.request.limits.maxScanChars || this.doc.tooDeep) return this.passOrBlock('oversize');
    this.mark = performance.now();
    return this.from(0, -1);
  }

  private passOrBlock(why: 'oversize' | 'timeout'): ScanOutcome {
    if (this.request.limits.onOversize === 'pass') {
      this.events.add(why, 'pass', 1);
      return { kind: 'scanned', values: this.request.surfaces.map(() => undefined), events: this.events.list(), unscanned: why };
    }
    this.events.add(why, 'block', 1);
    return { kind: 'blocked', kinds: [why], events: this.events.list() };
  }

  /**
   * Runs the rules from rule `r`, text `n` + 1 of it (-1: the rule's start), synchronously until a text needs a
   * turn of the event loop first; the rest then runs after that turn.
   */
  private from(r: number, n: number): ScanOutcome | Promise<ScanOutcome> {
    const { rules } = this.request;
    const { doc } = this;
    for (; r < rules.length; r += 1, n = -1) {
      const rule = rules[r]!;
      if (n < 0) {
        const places = rule.fields ? doc.select(rule.fields) : undefined;
        if (places && rule.detectors.length === 0) {
          const outcome = this.fieldsOnly(rule, places);
          if (outcome) return outcome;
          continue;
        }
        this.leaves = places ? [...new Set(places.flatMap((place) => range(place.from, place.to)))] : undefined;
      }
      const leaves = this.leaves;
      const count = leaves ? leaves.length : doc.texts.length;
      for (n += 1; n < count; n += 1) {
        const i = leaves ? leaves[n]! : n;
        const text = doc.texts[i]!;
        if (text.length === 0) continue;
        // A text within one chunk, read before the next turn is due, is scanned without a turn of its own.
        if (text.length > CHUNK_CHARS || this.sinceYield >= CHUNK_CHARS) return this.afterTurns(r, n, i, text, rule);
        if (scratch.length > 0) scratch.length = 0; // left by a detector that threw
        const outcome = this.judge(i, text, rule, this.findChunk(text, 0, rule, scratch) ? 'timeout' : scratch);
        if (scratch.length > 0) scratch.length = 0;
        if (outcome) return outcome;
      }
    }
    return this.finish();
  }

  /** Text `i` read chunk by chunk with turns of the event loop between them, then the rest of the scan. */
  private async afterTurns(r: number, n: number, i: number, text: string, rule: CompiledRule): Promise<ScanOutcome> {
    const outcome = this.judge(i, text, rule, await this.findIn(text, rule));
    return outcome ?? this.from(r, n);
  }

  /** A fields-only rule: each selected value is the finding, whole. An outcome when the rule ends the scan. */
  private fieldsOnly(rule: CompiledRule, places: ReturnType<Document['select']>): ScanOutcome | undefined {
    const { doc, request, events } = this;
    if (places.length === 0) return undefined;
    events.add('field', rule.action, places.length);
    if (rule.action === 'block') return { kind: 'blocked', kinds: ['field'], events: events.list() };
    if (rule.action === 'flag') return undefined;
    this.original ??= [...doc.texts];
    for (const place of places) {
      const placeholder = rule.action === 'hash' ? hashOf(request.hashKey, 'field', place.leaf ? doc.texts[place.from]! : JSON.stringify(pathValue(request.surfaces[place.surface]!.value, place.path)) ?? '') : maskOf('field');
      if (place.leaf) doc.texts[place.from] = placeholder;
      else {
        doc.replaced.push({ surface: place.surface, path: place.path, value: placeholder });
        for (let i = place.from; i < place.to; i += 1) doc.texts[i] = ''; // the subtree goes whole: nothing in it is scanned again
      }
    }
    return undefined;
  }

  /** What the rule's findings in text `i` do: an outcome when they end the scan, else undefined (events counted, text rewritten). */
  private judge(i: number, text: string, rule: CompiledRule, found: Finding[] | 'timeout' | 'cancelled'): ScanOutcome | undefined {
    const { events } = this;
    if (found === 'cancelled') return { kind: 'blocked', kinds: ['cancelled'], events: events.list() };
    if (found === 'timeout') return this.passOrBlock('timeout');
    // Nothing found (the common case): nothing to score, count or rewrite.
    if (found.length === 0) return undefined;
    let findings = found;
    let score: number | undefined;
    if (rule.kinds.has('injection')) {
      score = injectionScore(findings);
      if (score < rule.minScore) findings = findings.filter((finding) => finding.kind !== 'injection');
    }
    if (findings.length === 0) return undefined;
    const byKind = new Map<string, number>();
    for (const finding of findings) byKind.set(finding.kind, (byKind.get(finding.kind) ?? 0) + 1);
    for (const [kind, count] of byKind) events.add(kind, rule.action, count, kind === 'injection' ? score : undefined);
    if (rule.action === 'block') return { kind: 'blocked', kinds: [...byKind.keys()], events: events.list() };
    if (rule.action === 'mask' || rule.action === 'hash') {
      this.original ??= [...this.doc.texts];
      this.doc.texts[i] = rewrite(text, findings, rule.action, this.request.hashKey);
    }
    return undefined;
  }

  /** The rule's findings in `text`, one chunk at a time; a turn of the event loop only once CHUNK_CHARS were read since the last. */
  private async findIn(text: string, rule: CompiledRule): Promise<Finding[] | 'timeout' | 'cancelled'> {
    const found: Finding[] = [];
    for (let from = 0; from < text.length || from === 0; from += CHUNK_CHARS) {
      if (this.sinceYield >= CHUNK_CHARS) {
        this.sinceYield = 0;
        this.spentMs += performance.now() - this.mark;
        await yieldToLoop();
        this.mark = performance.now();
        this.sinceClock = 0;
        if (this.request.cancellation?.aborted === true) return 'cancelled';
      }
      if (this.findChunk(text, from, rule, found)) return 'timeout';
      if (text.length <= CHUNK_CHARS) break;
    }
    return found;
  }

  /** Appends the rule's findings in the chunk of `text` at `from`; true once the scan is past its time bound. */
  private findChunk(text: string, from: number, rule: CompiledRule, found: Finding[]): boolean {
    const whole = text.length <= CHUNK_CHARS;
    const chunk = whole ? text : text.slice(from, from + CHUNK_CHARS + CHUNK_OVERLAP);
    const before = found.length;
    detect(rule.detectors, chunk, found, this);
    this.sinceYield += chunk.length;
    this.sinceClock += chunk.length;
    if (this.sinceClock >= CLOCK_CHARS) {
      const now = performance.now();
      this.spentMs += now - this.mark;
      this.mark = now;
      this.sinceClock = 0;
    }
    // Kept by the chunk it starts in (a finding in the overlap belongs to the next chunk), and of the rule's kinds.
    let kept = before;
    for (let i = before; i < found.length; i += 1) {
      const finding = found[i]!;
      if (rule.kinds.has(finding.kind) && (whole || finding.start < CHUNK_CHARS || from + CHUNK_CHARS >= text.length)) {
        found[kept] = from === 0 ? finding : { ...finding, start: finding.start + from, end: finding.end + from };
        kept += 1;
      }
    }
    // Only when something was dropped: setting an array's length goes through V8's runtime even when it is unchanged.
    if (kept !== found.length) found.length = kept;
    return this.spentMs > this.request.limits.maxScanMs;
  }

  /** Writes the rewritten texts back into copies of the surfaces they came from. */
  private finish(): ScanOutcome {
    const { doc, request, original } = this;
    if (original === undefined && doc.replaced.length === 0) {
      const events = this.events.list();
      return events === NO_EVENTS ? cleanOutcome(request.surfaces.length) : { kind: 'scanned', values: request.surfaces.map(() => undefined), events };
    }
    const values: unknown[] = request.surfaces.map(() => undefined);
    const copy = (surface: number): unknown => (values[surface] ??= structuredClone(request.surfaces[surface]!.value));
    doc.texts.forEach((text, i) => {
      if (original === undefined || text === original[i]) return;
      const leaf = doc.leaves[i]!;
      values[leaf.surface] = setAt(copy(leaf.surface), leaf.path, text);
    });
    for (const { surface, path, value } of doc.replaced) values[surface] = setAt(copy(surface), path, value);
    return { kind: 'scanned', values, events: this.events.list() };
  }
}

function range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = from; i < to; i += 1) out.push(i);
  return out;
}

function pathValue(root: unknown, path: readonly Key[]): unknown {
  let node = root;
  for (const key of path) node = (node as Record<Key, unknown>)[key];
  return node;
}
