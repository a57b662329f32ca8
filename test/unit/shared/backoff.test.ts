import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../../src/shared/backoff.js';

describe('backoffDelay', () => {
  const options = { initialMs: 100, maxMs: 1000, factor: 2 };

  it('grows exponentially from the first attempt and spans half to all of the capped delay', () => {
    expect([0, 1, 2, 3].map((attempt) => backoffDelay(attempt, options, () => 0))).toEqual([50, 100, 200, 400]);
    expect([0, 1, 2, 3].map((attempt) => backoffDelay(attempt, options, () => 1))).toEqual([100, 200, 400, 800]);
    expect(backoffDelay(1, options, () => 0.5)).toBe(150);
  });

  it('stays within [maxMs / 2, maxMs] however many attempts failed, whatever the jitter draws', () => {
    let seed = 7;
    // A fixed pseudo-random sequence in [0, 1): the bounds hold for every draw, not only the ends.
    const random = () => ((seed = (seed * 16_807) % 2_147_483_647) - 1) / 2_147_483_646;
    for (const attempt of [4, 10, 30, 1000, 5000]) {
      for (let draw = 0; draw < 200; draw++) {
        const delay = backoffDelay(attempt, options, random);
        expect(delay).toBeGreaterThanOrEqual(500);
        expect(delay).toBeLessThanOrEqual(1000);
      }
    }
  });

  it('is 0 with a zero start, also past the point where the growth overflows', () => {
    expect(backoffDelay(5000, { initialMs: 0, maxMs: 1000, factor: 2 }, () => 1)).toBe(0);
  });

  it('draws different waits for clients that failed together (the jitter is used)', () => {
    const draws = new Set(Array.from({ length: 50 }, () => backoffDelay(3, options)));
    expect(draws.size).toBeGreaterThan(1);
  });
});
