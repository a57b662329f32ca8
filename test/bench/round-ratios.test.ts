import { describe, expect, it } from 'vitest';
import { roundRatios, type MeasuredRun } from '../../bench/summary.js';

const run = (requestsPerSec: number): MeasuredRun => ({ requestsPerSec, p50Ms: 1, p99Ms: 2, requests: requestsPerSec, non2xx: 0, errors: 0 });

describe('round ratios', () => {
  it('divides each round by the anchor of the same round, not by the mean of all rounds', () => {
    // The machine ran twice as fast in the second round: the ratio of means says 0.67, each round says 0.5 or 0.75.
    const ratios = roundRatios([run(500), run(1500)], [run(1000), run(2000)]);
    expect(ratios).toEqual({ median: 0.625, min: 0.5, max: 0.75 });
    expect(roundRatios([run(1), run(3), run(2)], [run(2), run(4), run(4)]).median).toBe(0.5);
  });

  it('refuses rounds that do not pair up', () => {
    expect(() => roundRatios([run(1)], [run(1), run(2)])).toThrow(/same rounds/);
    expect(() => roundRatios([], [])).toThrow(/same rounds/);
  });
});
