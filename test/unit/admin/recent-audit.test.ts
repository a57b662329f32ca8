import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { createRecentAudit } from '../../../src/admin/recent-audit.js';
import type { AuditSink, CallAuditEvent } from '../../../src/audit/types.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import type { StateStore } from '../../../src/store/types.js';

const MAX = 20_000;
const off: AuditSink = { enabled: false, write: () => undefined, flush: async () => undefined, close: async () => undefined };

/** A memory store that records how many entries each read of the copy returned: the query's I/O and memory. */
function countingStore(): { store: StateStore; pages: number[] } {
  const inner = createMemoryStore();
  const pages: number[] = [];
  const store: StateStore = {
    ...inner,
    async recent(key, limit, offset) {
      const page = await inner.recent(key, limit, offset);
      pages.push(page.length);
      return page;
    },
  };
  return { store, pages };
}

const event = (i: number, tenant: string, user: string): CallAuditEvent => ({
  event: 'call',
  time: 1_000_000 + i,
  requestId: `req-${i}`,
  callId: `call-${i}`,
  tenant,
  user,
  tool: 'get_weather',
  source: 'function',
  argsSha256: null,
  outcome: 'ok',
  errorType: null,
  durationMs: 1,
  approvalId: null,
});

/** A full copy for acme (MAX events, `rare` calls only among the newest 300) and some globex events. */
function filledCopy() {
  const { store, pages } = countingStore();
  const recent = createRecentAudit({ store, max: MAX, log: pino({ level: 'silent' }) });
  const sink = recent.tee(off);
  for (let i = 0; i < MAX + 500; i += 1) {
    sink.write(event(i, 'acme', i >= MAX + 200 && i % 100 === 0 ? 'rare' : 'bulk'));
    if (i % 1000 === 0) sink.write(event(i, 'globex', 'gina'));
  }
  pages.length = 0;
  return { recent, pages };
}

const total = (pages: number[]): number => pages.reduce((sum, n) => sum + n, 0);

describe('recent audit copy: bounded reads', () => {
  it('answers the newest N events of a large copy by reading exactly N entries', async () => {
    const { recent, pages } = filledCopy();
    const newest = await recent.query('acme', { limit: 25 });
    expect(newest.map((e) => e.requestId)).toEqual(Array.from({ length: 25 }, (_, i) => `req-${MAX + 499 - i}`));
    expect(total(pages)).toBe(25);
  });

  it('pages a filtered query newest first and stops once it has its matches', async () => {
    const { recent, pages } = filledCopy();
    const rare = await recent.query('acme', { user: 'rare', limit: 3 });
    expect(rare.map((e) => e.requestId)).toEqual([`req-${MAX + 400}`, `req-${MAX + 300}`, `req-${MAX + 200}`]);
    expect(Math.max(...pages)).toBeLessThanOrEqual(256);
    expect(total(pages)).toBeLessThanOrEqual(512);
  });

  it('never reads past the copy, in pages, when a filter matches nothing; and never shows another tenant', async () => {
    const { recent, pages } = filledCopy();
    expect(await recent.query('acme', { user: 'nobody', limit: 10 })).toEqual([]);
    expect(Math.max(...pages)).toBeLessThanOrEqual(256);
    expect(total(pages)).toBe(MAX);
    expect((await recent.query('acme', { user: 'gina', limit: 10 })).length).toBe(0);
    expect((await recent.query('globex', { limit: 1000 })).every((e) => e.tenant === 'globex' && e.user === 'gina')).toBe(true);
  });

  it('shows each event once when events arrive between two pages', async () => {
    const { store, pages } = countingStore();
    const recent = createRecentAudit({ store, max: 1000, log: pino({ level: 'silent' }) });
    const sink = recent.tee(off);
    for (let i = 0; i < 600; i += 1) sink.write(event(i, 'acme', i % 2 === 0 ? 'even' : 'odd'));
    // Each page read lets three newer events in first, shifting the list under the query.
    let next = 600;
    const shifting: StateStore = {
      ...store,
      async recent(key, limit, offset) {
        for (let k = 0; k < 3; k += 1) sink.write(event(next++, 'acme', 'late'));
        return store.recent(key, limit, offset);
      },
    };
    const query = createRecentAudit({ store: shifting, max: 1000, log: pino({ level: 'silent' }) });
    const evens = await query.query('acme', { user: 'even', limit: 200 });
    expect(new Set(evens.map((e) => e.requestId)).size).toBe(200);
    expect(evens.map((e) => e.time)).toEqual([...evens.map((e) => e.time)].sort((a, b) => b - a));
    expect(pages.length).toBeGreaterThan(1);
  });
});
