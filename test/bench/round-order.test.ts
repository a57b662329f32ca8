// The paired benches measure their targets one after another in each round; roundOrder decides the order
// (bench/gateway/targets.ts), and no target may keep a place: the place itself moved results (bench/results.md).
import { describe, expect, it } from 'vitest';
import { roundOrder } from '../../bench/gateway/targets.js';

describe('roundOrder', () => {
  it('gives each of three targets every place equally often over six rounds, six different orders', () => {
    const targets = ['bare', 'A', 'B'];
    const orders = Array.from({ length: 6 }, (_, round) => roundOrder(targets, round));
    expect(new Set(orders.map((order) => order.join())).size).toBe(6);
    for (const target of targets) {
      const places = orders.map((order) => order.indexOf(target)).sort();
      expect(places).toEqual([0, 0, 1, 1, 2, 2]);
    }
  });

  it('runs every target once per round and leaves the given list alone', () => {
    const targets = ['floor', 'toolgate'];
    for (let round = 0; round < 8; round += 1) expect([...roundOrder(targets, round)].sort()).toEqual(['floor', 'toolgate']);
    expect(targets).toEqual(['floor', 'toolgate']);
    expect(roundOrder(targets, 0)).toEqual(['floor', 'toolgate']);
    expect(roundOrder(targets, 1)).toEqual(['toolgate', 'floor']);
  });
});
