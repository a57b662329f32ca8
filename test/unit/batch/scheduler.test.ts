import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { planGroups, runBatch } from '../../../src/batch/scheduler.js';

interface Item {
  id: string;
  safe: boolean;
  ms: number;
  ignoreSignal?: boolean;
}
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    });
  });

function recorder() {
  const events: string[] = [];
  const run = async (item: Item, _index: number, ctx: { signal: AbortSignal }) => {
    events.push(`start ${item.id}`);
    try {
      await sleep(item.ms, item.ignoreSignal ? undefined : ctx.signal);
      events.push(`end ${item.id}`);
      return `ok ${item.id}`;
    } catch {
      events.push(`aborted ${item.id}`);
      return `aborted ${item.id}`;
    }
  };
  return { events, run };
}

describe('planGroups', () => {
  it('groups consecutive safe calls and isolates unsafe ones, or serialises everything', () => {
    expect(planGroups([true, true, false, true, false, false, true])).toEqual([[0, 1], [2], [3], [4], [5], [6]]);
    expect(planGroups([true, true, true], false)).toEqual([[0], [1], [2]]);
  });
});

describe('runBatch', () => {
  it('runs three safe calls at most two at a time, then the unsafe call alone, in that order', async () => {
    const { events, run } = recorder();
    const items: Item[] = [
      { id: 'a', safe: true, ms: 200 },
      { id: 'b', safe: true, ms: 200 },
      { id: 'c', safe: true, ms: 200 },
      { id: 'd', safe: false, ms: 10 },
    ];
    const groups: number[] = [];
    const results = await runBatch(items, { classify: (i) => i.safe, run, onTimeout: (i) => `timeout ${i.id}`, maxParallel: 2, onGroup: (n) => groups.push(n) });
    expect(results).toEqual(['ok a', 'ok b', 'ok c', 'ok d']);
    expect(groups).toEqual([3, 1]);
    // a and b overlap; c starts only when one of them ends; d starts after every safe call ended.
    expect(events.slice(0, 2)).toEqual(['start a', 'start b']);
    expect(events.indexOf('start c')).toBeGreaterThan(Math.min(events.indexOf('end a'), events.indexOf('end b')));
    expect(events.indexOf('start c')).toBeLessThan(Math.max(events.indexOf('end a'), events.indexOf('end b')));
    expect(events.slice(-2)).toEqual(['start d', 'end d']);
  });

  it('runs everything serially with parallel false', async () => {
    const { events, run } = recorder();
    const items: Item[] = ['a', 'b', 'c'].map((id) => ({ id, safe: true, ms: 5 }));
    await runBatch(items, { classify: (i) => i.safe, run, onTimeout: (i) => `timeout ${i.id}`, parallel: false });
    expect(events).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it('times out one call without cancelling its siblings and keeps input order', async () => {
    const { events, run } = recorder();
    const items: Item[] = [
      { id: 'slow', safe: true, ms: 10_000, ignoreSignal: true },
      { id: 'fast', safe: true, ms: 5 },
      { id: 'stuck', safe: true, ms: 10_000 },
    ];
    const results = await runBatch(items, { classify: (i) => i.safe, run, onTimeout: (i, _n, ms) => `timeout ${i.id} after ${ms}`, timeoutMs: 60 });
    expect(results).toEqual(['timeout slow after 60', 'ok fast', 'timeout stuck after 60']);
    expect(events).toContain('end fast');
    expect(events).toContain('aborted stuck');
  });

  it('applies deferred effects after the whole group, in input order', async () => {
    const log: string[] = [];
    const items: Item[] = [
      { id: 'a', safe: true, ms: 30 },
      { id: 'b', safe: true, ms: 1 },
      { id: 'c', safe: false, ms: 1 },
    ];
    await runBatch(items, {
      classify: (i) => i.safe,
      onTimeout: () => 'timeout',
      run: async (item, _index, ctx) => {
        await sleep(item.ms);
        log.push(`done ${item.id}`);
        ctx.defer(() => void log.push(`effect ${item.id}`));
        return 'ok';
      },
    });
    expect(log).toEqual(['done b', 'done a', 'effect a', 'effect b', 'done c', 'effect c']);
  });

  it('gives each call a deadline and aborts every call when the batch is cancelled', async () => {
    const controller = new AbortController();
    const seen: Array<number | undefined> = [];
    const pending = runBatch([{ id: 'x', safe: true, ms: 10_000 }], {
      classify: () => true,
      onTimeout: () => 'timeout',
      timeoutMs: 5_000,
      now: () => 1_000,
      signal: controller.signal,
      run: async (_item, _index, ctx) => {
        seen.push(ctx.deadline);
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
        return 'cancelled';
      },
    });
    controller.abort();
    expect(await pending).toEqual(['cancelled']);
    expect(seen).toEqual([6_000]);
  });

  it('gives each of 50 calls, 32 at a time, its own signal without a listener per call on the batch signal; the batch abort reaches each', async () => {
    const batch = new AbortController();
    const signals: AbortSignal[] = [];
    let inFlight = 0;
    const pending = runBatch(
      Array.from({ length: 50 }, (_, index) => index),
      {
        classify: () => true,
        maxParallel: 32,
        signal: batch.signal,
        onTimeout: () => 'timed out',
        run: (_item, _index, ctx) => {
          signals.push(ctx.signal);
          inFlight += 1;
          if (ctx.signal.aborted) return Promise.resolve(String(ctx.signal.reason));
          return new Promise<string>((resolve) => ctx.signal.addEventListener('abort', () => resolve(String(ctx.signal.reason)), { once: true }));
        },
      },
    );
    await expect.poll(() => inFlight).toBe(32);
    expect(new Set(signals).size).toBe(32);
    expect(signals).not.toContain(batch.signal);
    expect(getEventListeners(batch.signal, 'abort').length).toBeLessThanOrEqual(1);
    batch.abort('client gone');
    // The first 32 end on the abort; the other 18 start with an already-aborted signal of their own.
    expect(await pending).toEqual(Array.from({ length: 50 }, () => 'client gone'));
    expect(signals).toHaveLength(50);
    expect(signals.every((signal) => signal.aborted)).toBe(true);
  });
});
