import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const fixture = fileURLToPath(new URL('../../fixtures/cedar/deopt-during-decision.ts', import.meta.url));

// Issue 48: on Node 20 (V8 11.3) an optimized decision deoptimized while Cedar's Wasm ran aborted the process
// (exit 133, "unreachable code") when the Wasm call was inlined into it; src/cedar/wasm.ts keeps it out.
// The fixture forces that deoptimization with V8's natives syntax, so it runs in a child process of its own.
describe('a Cedar decision deoptimized while Cedar runs', () => {
  it('survives and decides, the process intact', { timeout: 90_000 }, () => {
    const run = spawnSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', fixture], { encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).not.toContain('unreachable code');
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ allowed: false, policies: ['limit'] });
  });
});
