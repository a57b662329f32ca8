import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { DeadlineQueue } from '../../../src/pipeline/deadline-queue.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('DeadlineQueue', () => {
  it('fires each deadline once, after its delay, in order within a delay', async () => {
    const queue = new DeadlineQueue();
    const fired: string[] = [];
    const started = performance.now();
    const times: number[] = [];
    queue.schedule(30, () => {
      fired.push('a');
      times.push(performance.now() - started);
    });
    await sleep(5);
    queue.schedule(30, () => fired.push('b'));
    queue.schedule(10, () => fired.push('short'));
    await sleep(60);
    expect(fired).toEqual(['short', 'a', 'b']);
    // Node may fire a timer up to a millisecond early on its own clock; never much earlier.
    expect(times[0]).toBeGreaterThanOrEqual(29);
  });

  it('expireAll fires every waiting deadline at once with its reason, skips cancelled ones, and never fires them again', async () => {
    const queue = new DeadlineQueue();
    const fired: Array<[string, unknown]> = [];
    queue.schedule(10_000, (early) => fired.push(['long', early]));
    queue.schedule(20, (early) => fired.push(['short', early]));
    queue.schedule(20, (early) => fired.push(['cancelled', early])).cancel();
    queue.expireAll('shutdown');
    expect(fired).toEqual([
      ['long', 'shutdown'],
      ['short', 'shutdown'],
    ]);
    await sleep(40);
    expect(fired).toHaveLength(2);
  });

  it('never fires a cancelled deadline; cancelling twice or after firing is harmless', async () => {
    const queue = new DeadlineQueue();
    const fired: string[] = [];
    const first = queue.schedule(15, () => fired.push('first'));
    const second = queue.schedule(15, () => fired.push('second'));
    const third = queue.schedule(15, () => fired.push('third'));
    second.cancel();
    second.cancel();
    first.cancel();
    await sleep(40);
    expect(fired).toEqual(['third']);
    third.cancel();
    expect(fired).toEqual(['third']);
  });

  it('keeps firing later deadlines when the head was cancelled (the timer re-arms for the new head)', async () => {
    const queue = new DeadlineQueue();
    const fired: number[] = [];
    const head = queue.schedule(10, () => fired.push(0));
    await sleep(5);
    queue.schedule(10, () => fired.push(performance.now()));
    const added = performance.now();
    head.cancel();
    await sleep(30);
    expect(fired).toHaveLength(1);
    expect(fired[0]! - added).toBeGreaterThanOrEqual(9);
  });

  it('drops the list of a delay once it is empty when its timer fires: arbitrary delays do not pile up', async () => {
    const queue = new DeadlineQueue();
    for (let ms = 1; ms <= 20; ms += 1) queue.schedule(ms + 0.5, () => {}).cancel();
    expect(queue.size).toBe(20);
    await sleep(50);
    expect(queue.size).toBe(0);
  });

  it('still fires the other due deadlines when one of them throws, and reports the error as uncaught', async () => {
    const queue = new DeadlineQueue();
    const fired: string[] = [];
    const uncaught: unknown[] = [];
    const listeners = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    process.on('uncaughtException', (error) => uncaught.push(error));
    try {
      queue.schedule(5, () => {
        throw new Error('boom');
      });
      queue.schedule(5, () => fired.push('after'));
      await sleep(30);
    } finally {
      process.removeAllListeners('uncaughtException');
      for (const listener of listeners) process.on('uncaughtException', listener);
    }
    expect(fired).toEqual(['after']);
    expect(uncaught).toEqual([new Error('boom')]);
  });

  it('does not keep the process alive by itself: a process with only a pending deadline exits', () => {
    const module = new URL('../../../src/pipeline/deadline-queue.ts', import.meta.url).href;
    const script = `const { DeadlineQueue } = await import(${JSON.stringify(module)}); new DeadlineQueue().schedule(60000, () => process.exit(3));`;
    // With a ref'd timer the child would wait the 60 s and be killed at 20 s (status null); unref'd it exits 0 at once.
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 20_000, encoding: 'utf8' });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
  });
});
