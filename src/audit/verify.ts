import { verify as verifySignature, type KeyObject } from 'node:crypto';
import { checkpointPayload, type CheckpointRecord } from './checkpoints.js';
import { eventHash, LINE_ENVELOPE_FIELDS } from './chain.js';

/**
 * How a chain broke: `edited` (an event no longer hashes to what the next event or a checkpoint says),
 * `removed` (events missing inside the chain or before its first one), `inserted` (an event that does not
 * belong: a second event with one seq, or one that links to nothing), `reordered` (events out of their
 * order), `truncated` (the log ends before a seq a checkpoint covers), `rewritten` (the chain is consistent
 * but is not the one the checkpoints signed), `signature-bad`, `unknown-key` (a checkpoint signed by a key
 * not among the public keys).
 */
export type BreakKind = 'edited' | 'removed' | 'inserted' | 'reordered' | 'truncated' | 'rewritten' | 'signature-bad' | 'unknown-key';

/** Where a line is: its source (file name or URL) and 1-based line number. */
export interface LinePosition {
  source: string;
  line: number;
}

export interface ChainBreak {
  chain: string | null;
  kind: BreakKind;
  /** The line where it shows (a log line, or a checkpoint line for a checkpoint's own fault). */
  at: LinePosition | null;
  /** The seq concerned, when there is one. */
  seq: number | null;
  message: string;
}

export interface ChainReport {
  chain: string;
  events: number;
  firstSeq: number | null;
  lastSeq: number | null;
  /** Events in order and linked, from the chain's start up to the first break (all of them when none). */
  verified: number;
  /** Highest seq a valid checkpoint covers and the log matches (0 when none does). */
  anchoredSeq: number;
  checkpoints: number;
  break: ChainBreak | null;
}

export interface VerifyReport {
  ok: boolean;
  chains: ChainReport[];
  /** Audit lines that could not be read (the first makes the report fail), with those chains' breaks. */
  breaks: ChainBreak[];
  checkpoints: { total: number; valid: number };
  /** Lines that are not audit lines (logs beside them on stdout), skipped. */
  ignoredLines: number;
  /** Audit lines written without chain fields (the chain off), counted, not checked. */
  unchainedLines: number;
  /** A last line cut short without its newline (a process killed while writing), skipped. */
  tornLines: number;
}

export interface TextSource {
  name: string;
  text: string;
}

interface Entry {
  seq: number;
  prev: string | null;
  hash: string;
  at: LinePosition;
}

type Parsed = { kind: 'event'; chain: string; entry: Entry } | { kind: 'unchained' } | { kind: 'ignored' } | { kind: 'garbled' } | { kind: 'torn' };

function parseLogLine(text: string, at: LinePosition, last: boolean): Parsed {
  let line: unknown;
  try {
    line = JSON.parse(text);
  } catch {
    // A line that looks like one of ours but does not parse was changed, unless the process died writing it.
    if (!text.includes('"msg":"audit"') && !text.startsWith('{"level":30,')) return { kind: 'ignored' };
    return last ? { kind: 'torn' } : { kind: 'garbled' };
  }
  if (typeof line !== 'object' || line === null || Array.isArray(line)) return { kind: 'ignored' };
  const record = line as Record<string, unknown>;
  if (record.msg !== 'audit') return { kind: 'ignored' };
  const { chain, seq, prev } = record;
  if (chain === undefined && seq === undefined && prev === undefined) return { kind: 'unchained' };
  if (typeof chain !== 'string' || typeof seq !== 'number' || !Number.isSafeInteger(seq) || (prev !== null && typeof prev !== 'string')) return { kind: 'garbled' };
  const event: Record<string, unknown> = {};
  for (const key of Object.keys(record)) if (!LINE_ENVELOPE_FIELDS.has(key)) event[key] = record[key];
  return { kind: 'event', chain, entry: { seq, prev, hash: eventHash(event), at } };
}

const where = (at: LinePosition | null): string => (at ? `${at.source}:${at.line}` : 'unknown line');

/**
 * The first break in a chain's events in log order, and how many events before it hold. A chain starts at
 * seq 1, or where a valid checkpoint signed the event before its first one (older files rotated away).
 */
function walkChain(chain: string, entries: Entry[], anchors: ReadonlyMap<number, string>): { verified: number; break: ChainBreak | null } {
  const bySeq = new Map<number, Entry[]>();
  for (const entry of entries) {
    const same = bySeq.get(entry.seq);
    if (same) same.push(entry);
    else bySeq.set(entry.seq, [entry]);
  }
  const first = entries[0];
  const startsAnchored = first !== undefined && first.seq > 1 && anchors.get(first.seq - 1) === first.prev && bySeq.get(first.seq)!.length === 1;
  let last: Entry | undefined;
  for (const [index, entry] of entries.entries()) {
    if (index === 0 && startsAnchored) {
      last = entry;
      continue;
    }
    const broken = (kind: BreakKind, message: string): { verified: number; break: ChainBreak } => ({ verified: index, break: { chain, kind, at: entry.at, seq: entry.seq, message } });
    const same = bySeq.get(entry.seq)!;
    if (same.length > 1) return broken('inserted', `seq ${entry.seq} appears ${same.length} times (${same.map((e) => where(e.at)).join(', ')})`);
    const expected = (last?.seq ?? 0) + 1;
    if (entry.seq !== expected) {
      const before = bySeq.get(entry.seq - 1)?.[0];
      if (before && before !== last && entry.prev === before.hash) return broken('reordered', `seq ${entry.seq} stands where seq ${expected} belongs`);
      if (entry.seq > expected && !bySeq.has(expected)) {
        if (last && entry.prev === last.hash) return broken('edited', `seq ${entry.seq} links to seq ${last.seq} (its seq was changed)`);
        return broken('removed', entry.seq - expected === 1 ? `seq ${expected} is missing` : `seqs ${expected}–${entry.seq - 1} are missing`);
      }
      return broken('inserted', `seq ${entry.seq} does not link into the chain after seq ${last?.seq ?? 0}`);
    }
    const prevHash = last?.hash ?? null;
    if (entry.prev !== prevHash) {
      const edited = last ? `the event at ${where(last.at)} (seq ${last.seq}) or this line's prev was changed` : 'the first event does not start a chain';
      return { verified: Math.max(0, index - 1), break: { chain, kind: 'edited', at: last?.at ?? entry.at, seq: last?.seq ?? entry.seq, message: edited } };
    }
    last = entry;
  }
  return { verified: entries.length, break: null };
}

function parseCheckpoint(text: string): CheckpointRecord | undefined {
  try {
    const record = JSON.parse(text) as Partial<CheckpointRecord>;
    const ok = record.type === 'audit_checkpoint' && typeof record.chain === 'string' && typeof record.seq === 'number' && typeof record.hash === 'string' &&
      (record.prev === null || typeof record.prev === 'string') && typeof record.time === 'number' && typeof record.keyId === 'string' && typeof record.signature === 'string';
    return ok ? (record as CheckpointRecord) : undefined;
  } catch {
    return undefined;
  }
}

/** One checkpoint line: its record when it parses, and whether its signature verifies with a known key. */
export function checkCheckpointLine(
  text: string,
  publicKeys: ReadonlyMap<string, KeyObject>,
): { record: CheckpointRecord; fault?: undefined } | { record: CheckpointRecord | undefined; fault: 'signature-bad' | 'unknown-key'; message: string } {
  const record = parseCheckpoint(text);
  if (!record) return { record, fault: 'signature-bad', message: 'not a checkpoint record' };
  const key = publicKeys.get(record.keyId);
  if (!key) return { record, fault: 'unknown-key', message: `signed by key "${record.keyId}", which is not among the public keys` };
  if (!verifySignature(null, checkpointPayload(record), key, Buffer.from(record.signature, 'base64'))) return { record, fault: 'signature-bad', message: `the signature of key "${record.keyId}" does not verify` };
  return { record };
}

const linesOf = (source: TextSource): Array<{ text: string; at: LinePosition; last: boolean }> => {
  const lines = source.text.split('\n');
  const endsClean = source.text.endsWith('\n');
  if (endsClean) lines.pop();
  return lines.map((text, index) => ({ text: text.replace(/\r$/, ''), at: { source: source.name, line: index + 1 }, last: !endsClean && index === lines.length - 1 }));
};

/** The chain ids the logs' audit lines name (which stored checkpoint lists a verifier needs). */
export function chainsInLogs(logs: readonly TextSource[]): Set<string> {
  const chains = new Set<string>();
  for (const source of logs) {
    for (const { text, at, last } of linesOf(source)) {
      if (text.trim() === '') continue;
      const parsed = parseLogLine(text, at, last);
      if (parsed.kind === 'event') chains.add(parsed.chain);
    }
  }
  return chains;
}

/**
 * Checks audit logs (in the order given: oldest rotated file first) against their signed checkpoints.
 * Offline and pure: the caller reads the files and keys.
 */
export function verifyAudit(input: { logs: TextSource[]; checkpoints: TextSource[]; publicKeys: ReadonlyMap<string, KeyObject> }): VerifyReport {
  const chains = new Map<string, Entry[]>();
  const breaks: ChainBreak[] = [];
  let ignoredLines = 0;
  let unchainedLines = 0;
  let tornLines = 0;
  for (const source of input.logs) {
    for (const { text, at, last } of linesOf(source)) {
      if (text.trim() === '') continue;
      const parsed = parseLogLine(text, at, last);
      if (parsed.kind === 'ignored') ignoredLines += 1;
      else if (parsed.kind === 'unchained') unchainedLines += 1;
      else if (parsed.kind === 'torn') tornLines += 1;
      else if (parsed.kind === 'garbled') breaks.push({ chain: null, kind: 'edited', at, seq: null, message: 'an audit line that no longer parses as one' });
      else {
        const entries = chains.get(parsed.chain);
        if (entries) entries.push(parsed.entry);
        else chains.set(parsed.chain, [parsed.entry]);
      }
    }
  }

  // Checkpoints first: a valid one may anchor where a chain's retained logs begin.
  let total = 0;
  const valid: Array<{ record: CheckpointRecord; at: LinePosition }> = [];
  const faults: ChainBreak[] = [];
  for (const source of input.checkpoints) {
    for (const { text, at } of linesOf(source)) {
      if (text.trim() === '') continue;
      total += 1;
      const checked = checkCheckpointLine(text, input.publicKeys);
      if (checked.fault) faults.push({ chain: checked.record?.chain ?? null, kind: checked.fault, at, seq: checked.record?.seq ?? null, message: checked.message });
      else valid.push({ record: checked.record, at });
    }
  }
  const anchors = new Map<string, Map<number, string>>();
  for (const { record } of valid) {
    const byChain = anchors.get(record.chain) ?? new Map<number, string>();
    byChain.set(record.seq, record.hash);
    anchors.set(record.chain, byChain);
  }

  const reports = new Map<string, ChainReport>();
  const walked = new Map<string, Entry[]>();
  for (const [chain, entries] of chains) {
    const { verified, break: broken } = walkChain(chain, entries, anchors.get(chain) ?? new Map());
    walked.set(chain, entries.slice(0, verified));
    const seqs = entries.map((entry) => entry.seq);
    const firstSeq = seqs.reduce((a, b) => Math.min(a, b));
    const lastSeq = seqs.reduce((a, b) => Math.max(a, b));
    reports.set(chain, { chain, events: entries.length, firstSeq, lastSeq, verified, anchoredSeq: 0, checkpoints: 0, break: broken });
  }
  const reportOf = (chain: string): ChainReport => reports.get(chain) ?? newEmptyReport(reports, chain);
  // A break in the chain itself comes first; then the checkpoints' faults, in their order.
  for (const fault of faults) {
    if (fault.chain === null) breaks.push(fault);
    else reportOf(fault.chain).break ??= fault;
  }

  for (const { record, at } of valid) {
    const report = reportOf(record.chain);
    report.checkpoints += 1;
    const fail = (kind: BreakKind, message: string, shows: LinePosition = at): void => void (report.break ??= { chain: record.chain, kind, at: shows, seq: record.seq, message });
    const entries = walked.get(record.chain) ?? [];
    const startSeq = entries[0]?.seq ?? 1;
    // Older than the logs given (their files rotated away): nothing left to compare it with.
    if (record.seq < startSeq) continue;
    // The unbroken part holds startSeq, startSeq + 1, … in order.
    const held = entries[record.seq - startSeq];
    if (!held) {
      // Past the unbroken part: a break before it is already reported.
      if (report.break) continue;
      const lastSeq = report.lastSeq ?? 0;
      fail('truncated', lastSeq === 0 ? `no events of this chain in the logs, though a checkpoint covers seq ${record.seq}` : `the log ends at seq ${lastSeq}; a checkpoint covers seq ${record.seq}`);
      continue;
    }
    if (held.hash !== record.hash) {
      // The event before it still hashes to what was signed: only this one changed.
      const before = entries[record.seq - startSeq - 1];
      const priorHolds = before === undefined ? record.seq === 1 || held.prev === record.prev : before.hash === record.prev;
      if (priorHolds) fail('edited', `the event (seq ${record.seq}) differs from the one checkpointed at ${where(at)}`, held.at);
      else fail('rewritten', `the chain up to seq ${record.seq} is not the one checkpointed at ${where(at)}`);
      continue;
    }
    report.anchoredSeq = Math.max(report.anchoredSeq, record.seq);
  }

  const all = [...reports.values()].sort((a, b) => a.chain.localeCompare(b.chain));
  const chainBreaks = all.flatMap((report) => (report.break ? [report.break] : []));
  const everyBreak = [...breaks, ...chainBreaks];
  return { ok: everyBreak.length === 0, chains: all, breaks: everyBreak, checkpoints: { total, valid: valid.length }, ignoredLines, unchainedLines, tornLines };
}

function newEmptyReport(reports: Map<string, ChainReport>, chain: string): ChainReport {
  const report: ChainReport = { chain, events: 0, firstSeq: null, lastSeq: null, verified: 0, anchoredSeq: 0, checkpoints: 0, break: null };
  reports.set(chain, report);
  return report;
}
