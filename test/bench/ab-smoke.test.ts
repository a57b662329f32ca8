// Smoke test of `npm run bench:ab` at its smallest size, one checkout against itself: it starts the bare
// route, the MCP floor and both toolgates of each comparison, drives them and renders the tables. It
// asserts on content, never on timings. Also: how a side named by a commit becomes a temporary worktree.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { abBench } from '../../bench/ab.js';
import { checkoutOf } from '../../bench/checkout.js';
import { packageRoot } from '../../src/config/demo.js';

const root = packageRoot();
const git = (...args: string[]): string => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();

/** The data rows of the round table under a `### <title>` heading. */
function roundRows(markdown: string, title: string): string[] {
  const section = markdown.split('\n### ').find((part) => part.startsWith(title));
  expect(section, `a section "${title}"`).toBeDefined();
  return section!.split('\n').filter((line) => /^\| \d+ \|/.test(line));
}

describe('the A/B bench', () => {
  it('measures two checkouts on the hot path against the bare route and on MCP against the floor, round by round', { timeout: 600_000 }, async () => {
    const markdown = await abBench(root, root, { rounds: 1, durationSec: 0.5, warmupSec: 0.3, connections: 4, mcpConnections: 2, sections: ['gateway', 'mcp'] });
    for (const title of ['Hot path', 'MCP']) {
      const rows = roundRows(markdown, title);
      expect(rows).toHaveLength(1);
      const [baseRps, a, b] = rows[0]!.split('|').slice(2, 5).map((cell) => Number(cell.trim()));
      expect(baseRps).toBeGreaterThan(0);
      expect(a).toBeGreaterThan(0);
      expect(b).toBeGreaterThan(0);
    }
    expect(markdown.match(/Ratio of means: A [\d.]+, B [\d.]+, B \/ A [\d.]+/g)).toHaveLength(2);
    expect(markdown.match(/B ahead of A in \d of 1 round\(s\), behind in \d\. Failed requests: 0\./g)).toHaveLength(2);
    // The summary: one row per comparison with A, B, B / A and the median of the rounds' B / A.
    expect(markdown).toMatch(/^\| hot-path \/ bare route \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \|$/m);
    expect(markdown).toMatch(/^\| MCP echo \/ floor \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \|$/m);
  });

  it('refuses a folder that is not a toolgate checkout', async () => {
    await expect(abBench(root, '/nonexistent-checkout', { rounds: 1 })).rejects.toThrow(/nonexistent-checkout has no bench\/gateway\/toolgate-server.ts/);
  });

  it('uses a directory as it is, and checks a commit out into a temporary worktree it removes afterwards', async () => {
    const asIs = await checkoutOf(root, { prepare: () => Promise.reject(new Error('a directory is not prepared')) });
    expect(asIs.dir).toBe(root);
    expect(asIs.commit).toBeUndefined();
    await asIs.remove();
    expect(existsSync(join(root, 'package.json'))).toBe(true);

    const prepared: string[] = [];
    const checkout = await checkoutOf('HEAD', { prepare: async (dir) => void prepared.push(dir) });
    try {
      expect(checkout.commit).toBe(git('rev-parse', 'HEAD'));
      expect(prepared).toEqual([checkout.dir]);
      expect(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: checkout.dir, encoding: 'utf8' }).trim()).toBe(checkout.commit);
      expect(JSON.parse(readFileSync(join(checkout.dir, 'package.json'), 'utf8'))).toMatchObject({ name: 'toolgate' });
      expect(git('worktree', 'list')).toContain(checkout.dir);
    } finally {
      await checkout.remove();
    }
    expect(existsSync(checkout.dir)).toBe(false);
    expect(git('worktree', 'list')).not.toContain(checkout.dir);
  });

  it('removes the worktree when preparing it fails, and names a side that is neither a directory nor a commit', async () => {
    let made = '';
    await expect(
      checkoutOf('HEAD', {
        prepare: async (dir) => {
          made = dir;
          throw new Error('npm ci failed');
        },
      }),
    ).rejects.toThrow('npm ci failed');
    expect(made).not.toBe('');
    expect(existsSync(made)).toBe(false);
    expect(git('worktree', 'list')).not.toContain(made);
    await expect(checkoutOf('no-such-commit-or-folder')).rejects.toThrow(/no-such-commit-or-folder is neither a directory nor a commit/);
  });
});
