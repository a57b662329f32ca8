// Smoke test of `npm run bench:ab` at its smallest size, one checkout against itself: it starts the bare
// route and both toolgates, drives them and renders the table. It asserts on content, never on timings.
import { describe, expect, it } from 'vitest';
import { abBench } from '../../bench/ab.js';
import { packageRoot } from '../../src/config/demo.js';

describe('the A/B bench', () => {
  it('measures two checkouts against the bare route round by round and says which was ahead', { timeout: 120_000 }, async () => {
    const markdown = await abBench(packageRoot(), packageRoot(), { rounds: 1, durationSec: 0.5, warmupSec: 0.3, connections: 4 });
    const rows = markdown.split('\n').filter((line) => /^\| \d+ \|/.test(line));
    expect(rows).toHaveLength(1);
    for (const row of rows) {
      const [bareRps, a, b] = row.split('|').slice(2, 5).map((cell) => Number(cell.trim()));
      expect(bareRps).toBeGreaterThan(0);
      expect(a).toBeGreaterThan(0);
      expect(b).toBeGreaterThan(0);
    }
    expect(markdown).toMatch(/Ratio of means: A [\d.]+, B [\d.]+/);
    expect(markdown).toMatch(/B ahead of A in \d of 1 round\(s\), behind in \d\. Failed requests: 0\./);
  });

  it('refuses a folder that is not a toolgate checkout', async () => {
    await expect(abBench(packageRoot(), '/nonexistent-checkout', { rounds: 1 })).rejects.toThrow(/no bench\/gateway\/toolgate-server.ts/);
  });
});
