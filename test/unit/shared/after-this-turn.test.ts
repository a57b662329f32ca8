import { describe, expect, it } from 'vitest';
import { afterThisTurn } from '../../../src/shared/after-this-turn.js';

describe('afterThisTurn', () => {
  it('runs after the turn\'s ticks and microtasks, in the order queued', async () => {
    const seen: string[] = [];
    await new Promise<void>((resolve) => {
      afterThisTurn(() => seen.push('first'));
      process.nextTick(() => seen.push('tick'));
      void Promise.resolve().then(() => seen.push('microtask'));
      afterThisTurn(() => seen.push('second'));
      setTimeout(resolve, 5);
    });
    expect(seen.indexOf('tick')).toBeLessThan(seen.indexOf('first'));
    expect(seen.indexOf('microtask')).toBeLessThan(seen.indexOf('first'));
    expect(seen.filter((step) => step === 'first' || step === 'second')).toEqual(['first', 'second']);
  });

  it('runs the other callbacks of a turn when one throws, and the error still surfaces as uncaught', async () => {
    const uncaught: unknown[] = [];
    const listeners = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    process.on('uncaughtException', (error) => uncaught.push(error));
    const ran: string[] = [];
    try {
      await new Promise<void>((resolve) => {
        afterThisTurn(() => {
          throw new Error('boom');
        });
        afterThisTurn(() => ran.push('after the failure'));
        setTimeout(resolve, 10);
      });
    } finally {
      process.removeAllListeners('uncaughtException');
      for (const listener of listeners) process.on('uncaughtException', listener);
    }
    expect(ran).toEqual(['after the failure']);
    expect(uncaught).toMatchObject([{ message: 'boom' }]);
  });
});
