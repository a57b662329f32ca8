import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { BuiltinsConfig } from '../config/types.js';
import type { Principal } from '../call/principal.js';
import { type FsRoot, type FsScope, openRoot, withDirectory } from './workspace-fs.js';

export { denied, isInside } from './workspace-fs.js';

/**
 * The per-call context of every built-in tool: where the caller's workspace is, which extra roots it may
 * read, and the limits. Files are touched only through `workspace-fs` with `scope`, which walks every path
 * from a held descriptor of its root.
 */
export interface Workspace {
  /** Real path of the caller's workspace directory (created on first use). */
  readonly root: string;
  /** Real paths of the read-only extra roots that exist. */
  readonly readOnlyRoots: readonly string[];
  readonly limits: BuiltinsConfig['limits'];
  /** The roots as the file layer opens them. */
  readonly scope: FsScope;
  /** Host path of an existing folder inside the roots (a command's cwd), resolved like every file path. */
  resolveInside(input: string): Promise<string>;
}

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/**
 * A principal's tenant/user as one directory name. Plain ids stay readable; anything else (dots, slashes,
 * `..`, unicode, overlong) becomes `_` + a SHA-256 prefix. Safe names never start with `_`, so the two
 * forms cannot collide and no id can ever name a parent directory.
 */
export function encodeSegment(id: string): string {
  if (SAFE_NAME.test(id)) return id;
  return `_${createHash('sha256').update(id, 'utf8').digest('hex').slice(0, 32)}`;
}

/** Builds workspaces for principals. Roots are realpath-ed once; tenant directories on first use. */
export function createWorkspaceFactory(config: BuiltinsConfig): (principal: Principal) => Promise<Workspace> {
  let base: Promise<{ root: string; readOnly: string[] }> | undefined;
  const prepareBase = async () => {
    const root = path.resolve(config.workspaceRoot);
    await fsp.mkdir(root, { recursive: true, mode: 0o700 });
    const readOnly: string[] = [];
    for (const extra of config.readOnlyRoots) {
      try {
        readOnly.push(await fsp.realpath(path.resolve(extra)));
      } catch {
        // A configured root that does not exist simply grants nothing.
      }
    }
    return { root: await fsp.realpath(root), readOnly };
  };
  return async (principal) => {
    // A failed preparation (e.g. a transient mkdir error) is retried on the next call, not cached.
    base ??= prepareBase().catch((error: unknown) => {
      base = undefined;
      throw error;
    });
    const { root: baseRoot, readOnly } = await base;
    const segments = [encodeSegment(principal.tenant)];
    if (config.perUser) segments.push(encodeSegment(principal.user));
    const workspace: FsRoot = { path: path.join(baseRoot, ...segments), base: baseRoot, segments, relativeDisplay: true };
    // Created segment by segment through held handles; a segment replaced by a symlink is refused.
    await (await openRoot(workspace, true)).close();
    const readOnlyRoots = readOnly.map((ro): FsRoot => ({ path: ro, base: ro, segments: [], relativeDisplay: false }));
    return createWorkspace({ workspace, readOnly: readOnlyRoots }, config.limits);
  };
}

function createWorkspace(scope: FsScope, limits: BuiltinsConfig['limits']): Workspace {
  const resolveInside = (input: string) => withDirectory(scope, input, async (held) => path.join(held.root.path, ...held.parts));
  return Object.freeze({ root: scope.workspace.path, readOnlyRoots: scope.readOnly.map((ro) => ro.path), limits, scope, resolveInside });
}
