// One side of `npm run bench:ab`: a directory holding a toolgate checkout, used as it is, or a commit-ish
// of this repository, checked out into a temporary `git worktree` (under the OS temp folder), installed
// and built there, and removed when the comparison ends.
import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../src/config/demo.js';

const run = promisify(execFile);

export interface Checkout {
  /** What was asked for: a path or a commit-ish. */
  spec: string;
  /** The checkout's root folder. */
  dir: string;
  /** The commit a temporary worktree holds; undefined for a directory given as is. */
  commit?: string;
  /** Removes the temporary worktree (nothing for a directory given as is). Safe to call twice. */
  remove(): Promise<void>;
}

/** Installs and builds a fresh worktree (npm ci from the local cache where it can, then the build). */
export async function installAndBuild(dir: string): Promise<void> {
  const options = { cwd: dir, maxBuffer: 64 * 1024 * 1024 };
  await run('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], { ...options, timeout: 15 * 60_000 });
  await run('npm', ['run', 'build', '--silent'], { ...options, timeout: 10 * 60_000 });
}

async function commitOf(spec: string, repo: string): Promise<string | undefined> {
  try {
    const { stdout } = await run('git', ['rev-parse', '--verify', '--quiet', `${spec}^{commit}`], { cwd: repo });
    return stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The checkout `spec` names: an existing directory is used as it is; otherwise `spec` must name a commit of
 * the repository at `repo`, which is checked out detached into a new temporary worktree and `prepare`d.
 */
export async function checkoutOf(spec: string, options: { repo?: string; prepare?: (dir: string) => Promise<void> } = {}): Promise<Checkout> {
  const { repo = packageRoot(), prepare = installAndBuild } = options;
  if (existsSync(spec) && statSync(spec).isDirectory()) return { spec, dir: resolve(spec), remove: async () => {} };
  const commit = await commitOf(spec, repo);
  if (commit === undefined) throw new Error(`${spec} is neither a directory nor a commit of ${repo}`);
  const dir = await mkdtemp(join(tmpdir(), `toolgate-ab-${commit.slice(0, 10)}-`));
  let removed = false;
  const remove = async (): Promise<void> => {
    if (removed) return;
    removed = true;
    await run('git', ['worktree', 'remove', '--force', dir], { cwd: repo }).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    await run('git', ['worktree', 'prune'], { cwd: repo }).catch(() => undefined);
  };
  try {
    await run('git', ['worktree', 'add', '--detach', dir, commit], { cwd: repo });
    await prepare(dir);
  } catch (error) {
    await remove();
    throw error;
  }
  return { spec, dir, commit, remove };
}
