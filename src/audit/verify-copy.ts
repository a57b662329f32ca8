import { eventHash } from './chain.js';
import type { AuditEvent } from './types.js';

export interface CopyChain {
  chain: string;
  events: number;
  firstSeq: number;
  lastSeq: number;
}

export interface CopyBreak {
  chain: string;
  kind: 'edited' | 'removed' | 'inserted';
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
}

/**
 * Checks the links of the recent copy (GET /v1/admin/audit/verify): a window of each chain, so its oldest
 * event's own link is not checkable, and no signature is (the checkpoints live elsewhere: the offline verifier
 * checks those). Events are ordered by seq per chain; a write still on its way to the store can show as a
 * gap for a moment.
 */
export function verifyRecentCopy(events: readonly AuditEvent[]): CopyReport {
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
  return { ok: breaks.length === 0, events: events.length - unchained, unchained, chains: summary, breaks };
}
