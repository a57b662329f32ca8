// Smoke test of the gateway bench section at its smallest size: it starts both servers, checks that
// each answers ok:true, drives them and renders the table. It asserts on content, never on timings.
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bench } from '../../bench/gateway.js';

// Per-request server CPU comes from /proc (Linux); elsewhere the column shows a dash.
const hasProc = existsSync('/proc/self/stat');

describe('the gateway bench section', () => {
  it('runs bare Fastify and toolgate (cache on and off, hot path only), in fresh processes each round, and reports every row without failed requests', { timeout: 600_000 }, async () => {
    const markdown = await bench({ durationSec: 1, rounds: 2, connections: 8, warmupSec: 0.5 });
    const rows = markdown.split('\n').filter((line) => /^\| (bare|toolgate)/.test(line));
    expect(rows.map((row) => row.split('|')[1]!.trim())).toEqual([
      'bare Fastify route',
      'toolgate (JWT, token cache on)',
      'toolgate hot path only (JWT cache on; audit off, no rate limit)',
      'toolgate (JWT, token cache off)',
    ]);
    for (const row of rows) {
      const cells = row.split('|').map((cell) => cell.trim());
      expect(Number(cells[2])).toBeGreaterThan(0); // req/s
      const perRound = cells[6]!.split(' ').map(Number); // each round's ratio to the bare route's run of that round
      expect(perRound).toHaveLength(2);
      for (const ratio of perRound) expect(ratio).toBeGreaterThan(0);
      if (hasProc) expect(Number(cells[8])).toBeGreaterThan(0); // server CPU µs per request, from /proc
      expect(cells[9]).toBe('0'); // non-2xx + errors
    }
    expect(rows[0]!.split('|')[6]!.trim()).toBe('1.00 1.00');
    expect(markdown).toMatch(/JWT verification: with the token cache \d+ req\/s, without \d+ req\/s/);
    if (hasProc) expect(markdown).toMatch(/Server CPU per request: bare route [\d.]+ µs; toolgate's own work on top of it -?[\d.]+ µs on the hot path/);
  });
});
