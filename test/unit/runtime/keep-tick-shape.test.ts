import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { keepTickObjectShape, tickObjectKept } from '../../../src/runtime/keep-tick-shape.js';

const fixture = fileURLToPath(new URL('fixtures/tick-feedback.mjs', import.meta.url));

/** IC states of nextTick's literal stores after a full GC in a fresh process, with or without the kept tick object. */
function literalStates(keep: boolean): string[] {
  // %DebugPrint writes through V8's own buffered stream: into a file it arrives whole, into a pipe it can be cut short.
  const dir = mkdtempSync(join(tmpdir(), 'tick-feedback-'));
  const path = join(dir, 'out.txt');
  const out = openSync(path, 'w');
  try {
    const child = spawnSync(process.execPath, ['--expose-gc', '--allow-natives-syntax', '--import', 'tsx', fixture, keep ? 'keep' : 'none'], {
      stdio: ['ignore', out, 'pipe'],
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    return Array.from(readFileSync(path, 'utf8').matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g), (match) => match[1]!);
  } finally {
    closeSync(out);
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('keeping one tick object alive', () => {
  it('holds a tick object once loaded, and a second call keeps the same', () => {
    expect(tickObjectKept()).toBe(true);
    keepTickObjectShape();
    expect(tickObjectKept()).toBe(true);
  });

  it("keeps nextTick's literal stores monomorphic through a full GC that, without it, makes them megamorphic", () => {
    const without = literalStates(false);
    const kept = literalStates(true);
    // The control: this Node still frees the maps and goes megamorphic (if not, the workaround may be obsolete).
    expect(without).toContain('MEGAMORPHIC');
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.every((state) => state === 'MONOMORPHIC')).toBe(true);
  });
});
