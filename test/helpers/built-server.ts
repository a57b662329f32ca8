// The built gateway (dist/src/server.js) for tests of the process that ships. `npm start`'s own check
// (scripts/build-if-stale.mjs) builds dist/ only when a source is newer than the last build. After
// `npm run build` (CI builds before the suite) no test writes dist/, so none rewrites the files another
// test's gateway is loading at that moment; a checkout with edited sources is brought up to date by the
// first test that needs it (once per worker).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../../src/config/demo.js';

let checked: Promise<void> | undefined;

/** Resolves once dist/ holds a build of the current sources. */
export function builtServer(): Promise<void> {
  checked ??= promisify(execFile)(process.execPath, [join(packageRoot(), 'scripts/build-if-stale.mjs')], { cwd: packageRoot(), timeout: 230_000 }).then(() => undefined);
  return checked;
}
