import type { KeyObject } from 'node:crypto';
import { eventHash } from './chain.js';
import type { AuditEvent } from './types.js';
import { checkCheckpointLine } from './verify.js';

export interface CopyChain {
  chain: string;
  events: number;
  firstSeq: number;
  lastSeq: number;
}

export interface CopyBreak {
  chain: string;
  kind: 'edited' | 'removed' | 'inserted' | 'signature-bad' | 'unknown-key';
  seq: number;
  message: string;
}

export interface CopyReport {
  ok: boolean;
  /** Events checked, and kept events without chain fields (written while the chain was off), not checked. */
  events: number;
  unchained: number;
  chains: CopyChain[];
  breaks: CopyBreak[];
  /**
   * With checkpoints in the state store: the tenant's newest ones checked, how many verify with a configured
   * key, and how many of those sign an event the copy holds and still hashes to.
   */
  checkpoints?: { checked: number; valid: number; matched: number };
}

/** The tenant's newest stored checkpoints (JSON lines) and the keys that verify them. */
export interface CopyCheckpoints {
  text: string;
  publicKeys: ReadonlyMap<string, KeyObject>;
}

/**
 * Checks the links of the recent copy (GET /v1/admin/audit/verify): a window of each chain, so its oldest
 * event's own link is not checkable, and no signature is (the checkpoints live elsewhere: the offline verifier
 * checks those). Events are ordered by seq per chain; a write still on its way to the store can show as a
 * gap for a moment.
 */
export function verifyRecentCopy(events: readonly AuditEvent[], checkpoints?: CopyCheckpoints): CopyReport {
  const chains = new Map<string, AuditEvent[]>();
  let unchained = 0;
  for (const event of events) {
    if (typeof event.chain !== 'string' || typeof event.seq !== 'number') {
      unchained += 1;
      continue;
    }
    const list = chains.get(event.chain);
    if (list) list.push(event);
    else chains.set(event.chain, [event]);
  }
  const breaks: CopyBreak[] = [];
  const summary: CopyChain[] = [];
  for (const [chain, list] of chains) {
    list.sort((a, b) => a.seq! - b.seq!);
    summary.push({ chain, events: list.length, firstSeq: list[0]!.seq!, lastSeq: list[list.length - 1]!.seq! });
    for (let index = 0; index < list.length; index += 1) {
      const event = list[index]!;
      const seq = event.seq!;
      const before = list[index - 1];
      if (!before) {
        if (seq !== 1 || event.prev === null) continue;
        breaks.push({ chain, kind: 'edited', seq, message: 'the first event of the chain links to a predecessor' });
        break;
      }
      const found = (kind: CopyBreak['kind'], message: string): void => void breaks.push({ chain, kind, seq, message });
      if (before.seq === seq) found('inserted', `seq ${seq} is kept twice`);
      else if (before.seq! + 1 !== seq) found('removed', `seqs ${before.seq! + 1}–${seq - 1} are missing`);
      else if (event.prev !== eventHash(before)) found('edited', `seq ${before.seq} does not hash to the prev of seq ${seq}`);
      else continue;
      break;
    }
  }
  summary.sort((a, b) => a.chain.localeCompare(b.chain));
  const checked = checkpoints ? checkAgainstCheckpoints(chains, checkpoints, breaks) : undefined;
  return { ok: breaks.length === 0, events: events.length - unchained, unchained, chains: summary, breaks, ...(checked ? { checkpoints: checked } : {}) };
}

/**
 * Each stored checkpoint's signature, and the copy's event at its seq against the hash it signed; one break per
 * chain at most (a chain already broken keeps its first).
 */
function checkAgainstCheckpoints(chains: ReadonlyMap<string, AuditEvent[]>, checkpoints: CopyCheckpoints, breaks: CopyBreak[]): { checked: number; valid: number; matched: number } {
  const broken = new Set(breaks.map((found) => found.chain));
  const bySeq = new Map<string, AuditEvent>();
  for (const [chain, list] of chains) for (const event of list) bySeq.set(`${chain} ${event.seq}`, event);
  const counts = { checked: 0, valid: 0, matched: 0 };
  for (const line of checkpoints.text.split('\n')) {
    if (line.trim() === '') continue;
    counts.checked += 1;
    const result = checkCheckpointLine(line, checkpoints.publicKeys);
    const chain = result.record?.chain ?? '';
    const found = (kind: CopyBreak['kind'], message: string): void => {
      if (broken.has(chain)) return;
      broken.add(chain);
      breaks.push({ chain, kind, seq: result.record?.seq ?? 0, message });
    };
    if (result.fault) {
      found(result.fault, `a stored checkpoint: ${result.message}`);
      continue;
    }
    counts.valid += 1;
    const { record } = result;
    const event = bySeq.get(`${record.chain} ${record.seq}`);
    if (!event) continue;
    if (eventHash(event) === record.hash) counts.matched += 1;
    else found('edited', `seq ${record.seq} differs from the event a checkpoint signed`);
  }
  return counts;
}
