import { describe, expect, it } from 'vitest';
import { ConcurrencyGate } from '../../../src/code-mode/concurrency.js';

describe('ConcurrencyGate', () => {
  it('runs safe calls together up to the bound and an unsafe call alone, in arrival order', async () => {
    const gate = new ConcurrencyGate(2);
    const events: string[] = [];
    let releases: Array<() => void> = [];
    const task = (id: string, safe: boolean) =>
      gate.run(safe, () => {
        events.push(`start ${id}`);
        return new Promise<void>((resolve) => releases.push(() => (events.push(`end ${id}`), resolve())));
      });
    const all = Promise.all([task('a', true), task('b', true), task('c', true), task('u', false), task('d', true)]);
    const step = async () => {
      await new Promise((resolve) => setImmediate(resolve));
      const now = releases;
      releases = [];
      now.forEach((release) => release());
    };
    for (let i = 0; i < 6 && events.length < 10; i++) await step();
    await all;
    expect(events).toEqual(['start a', 'start b', 'end a', 'end b', 'start c', 'end c', 'start u', 'end u', 'start d', 'end d']);
  });
});
