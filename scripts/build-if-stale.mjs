#!/usr/bin/env node
// `npm start`'s prestart: builds dist/ (TypeScript and the console) only when a source is newer than the last
// build, and says what it does either way. `--stamp` (the end of `npm run build`) records a finished build.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stamp = join(root, 'dist', '.build-stamp');
const SOURCES = ['src', 'routes', 'policies', 'console', 'scripts', 'package.json', 'package-lock.json', 'tsconfig.json', 'openapi.yaml'];
const SKIP = new Set(['node_modules', 'dist', '.git']);

/** The newest modification time of a file below `path` (bounded by the tree's size; no links followed). */
function newest(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = 0;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (SKIP.has(entry.name) || entry.isSymbolicLink()) continue;
    latest = Math.max(latest, newest(join(path, entry.name)));
  }
  return latest;
}

function writeStamp() {
  mkdirSync(dirname(stamp), { recursive: true });
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
}

if (process.argv.includes('--stamp')) {
  writeStamp();
  process.exit(0);
}
const built = statSync(stamp, { throwIfNoEntry: false })?.mtimeMs ?? 0;
const changed = SOURCES.map((source) => newest(join(root, source))).reduce((a, b) => Math.max(a, b), 0);
if (built > 0 && built >= changed && existsSync(join(root, 'dist', 'src', 'server.js'))) {
  process.stdout.write('toolgate: dist/ is up to date with the sources, not rebuilding (npm run build forces it)\n');
  process.exit(0);
}
process.stdout.write(`toolgate: building the TypeScript and the console into dist/ (${built === 0 ? 'first start' : 'sources changed'}; this takes a while)…\n`);
const started = Date.now();
const result = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);
process.stdout.write(`toolgate: built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
