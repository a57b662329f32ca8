// `npm run bench` rewrites only the latest run in bench/results.md: the history written below it stays.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LATEST_END, LATEST_START, withLatestRun } from '../../bench/results-file.js';
import { packageRoot } from '../../src/config/demo.js';

describe('bench/results.md', () => {
  it('replaces the run between the markers and keeps everything around it', () => {
    const file = `# title\n\n${LATEST_START}\nold run\n${LATEST_END}\n\n## History\n\n| a run |\n`;
    expect(withLatestRun(file, 'new run\n')).toBe(`# title\n\n${LATEST_START}\nnew run\n${LATEST_END}\n\n## History\n\n| a run |\n`);
  });

  it('starts a file with the run, and puts the run above a file that has no markers', () => {
    expect(withLatestRun(undefined, 'run')).toBe(`${LATEST_START}\nrun\n${LATEST_END}\n`);
    expect(withLatestRun('\n# older results\n', 'run')).toBe(`${LATEST_START}\nrun\n${LATEST_END}\n\n# older results\n`);
  });

  it('has the markers, with the history below them', () => {
    const text = readFileSync(join(packageRoot(), 'bench', 'results.md'), 'utf8');
    const end = text.indexOf(LATEST_END);
    expect(text.indexOf(LATEST_START)).toBeGreaterThan(-1);
    expect(end).toBeGreaterThan(text.indexOf(LATEST_START));
    expect(text.slice(end)).toContain('## History');
  });
});
