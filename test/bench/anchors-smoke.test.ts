// Smoke test of the anchors bench section at its smallest size: it starts the bare route, the minimal
// composition, the MCP floor and toolgate on both paths, checks each answers, drives them and renders the
// table. It asserts on content, never on timings.
import { describe, expect, it } from 'vitest';
import { bench } from '../../bench/anchors.js';

describe('the anchors bench section', () => {
  it('measures toolgate against the minimal composition and the MCP floor in one run, with ratios and µs of own work', { timeout: 600_000 }, async () => {
    const markdown = await bench({ durationSec: 1, rounds: 1, connections: 8, mcpConnections: 4, warmupSec: 0.5 });
    const rows = markdown.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| target'));
    expect(rows).toHaveLength(5);
    const cells = rows.map((row) => row.split('|').map((cell) => cell.trim()));
    expect(cells.map((row) => row[1])).toEqual([
      'bare Fastify route',
      'minimal composition',
      '**toolgate `POST /v1/execute`, function echo, JWT** (anchor: composition)',
      'MCP floor: Fastify + SDK client → stdio echo',
      '**toolgate, same upstream (global MCP over stdio, API key)** (anchor: floor)',
    ]);
    for (const row of cells) expect(Number(row[2])).toBeGreaterThan(0); // req/s
    // Only toolgate's rows carry a ratio, the rounds' ratios and its own work.
    for (const index of [2, 4]) {
      expect(Number(cells[index]![5]!.replaceAll('*', ''))).toBeGreaterThan(0);
      expect(cells[index]![6]).toMatch(/^\d+\.\d\d \(\d+\.\d\d–\d+\.\d\d\)$/);
      expect(Number.isFinite(Number(cells[index]![7]))).toBe(true);
    }
    for (const index of [0, 1, 3]) expect(cells[index]![5]).toBe('—');
    expect(markdown).toContain('Failed requests: 0.');
  });
});
