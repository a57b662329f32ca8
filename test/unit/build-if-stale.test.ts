// `npm start` builds dist/ only when a source is newer than the last build, and says what it does: run on a
// copy of the script in a temporary tree, with a stand-in `npm` that records being asked to build.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/demo.js';

const tree = mkdtempSync(join(tmpdir(), 'toolgate-build-if-stale-'));
afterAll(() => rmSync(tree, { recursive: true, force: true }));

function setUp(): { run: () => string; built: () => boolean; touch: (file: string, secondsAgo: number) => void } {
  mkdirSync(join(tree, 'scripts'), { recursive: true });
  mkdirSync(join(tree, 'src'), { recursive: true });
  mkdirSync(join(tree, 'bin'), { recursive: true });
  copyFileSync(join(packageRoot(), 'scripts/build-if-stale.mjs'), join(tree, 'scripts/build-if-stale.mjs'));
  writeFileSync(join(tree, 'src/server.ts'), '');
  // The stand-in npm: `npm run build --silent` writes what a build writes, including the stamp.
  const npm = join(tree, 'bin/npm');
  writeFileSync(npm, `#!/bin/sh\nmkdir -p "${tree}/dist/src" && touch "${tree}/dist/src/server.js" "${tree}/built-marker" && node "${tree}/scripts/build-if-stale.mjs" --stamp\n`);
  chmodSync(npm, 0o755);
  const touch = (file: string, secondsAgo: number) => {
    const at = new Date(Date.now() - secondsAgo * 1000);
    utimesSync(join(tree, file), at, at);
  };
  const run = () => execFileSync(process.execPath, [join(tree, 'scripts/build-if-stale.mjs')], { env: { ...process.env, PATH: `${join(tree, 'bin')}:${process.env.PATH}` }, encoding: 'utf8', timeout: 20_000 });
  const built = () => {
    const was = existsSync(join(tree, 'built-marker'));
    rmSync(join(tree, 'built-marker'), { force: true });
    return was;
  };
  return { run, built, touch };
}

describe('npm start: build only when stale', () => {
  it('builds on the first start, not again while nothing changed, and again after a source changed, saying so each time', () => {
    const { run, built, touch } = setUp();
    expect(run()).toMatch(/^toolgate: building the TypeScript and the console into dist\/ \(first start; this takes a while\)…\ntoolgate: built in [\d.]+ s\n$/);
    expect(built()).toBe(true);
    touch('src/server.ts', 60);
    expect(run()).toBe('toolgate: dist/ is up to date with the sources, not rebuilding (npm run build forces it)\n');
    expect(built()).toBe(false);
    touch('src/server.ts', -5);
    expect(run()).toMatch(/\(sources changed; this takes a while\)/);
    expect(built()).toBe(true);
  });
});
