import { createHash } from 'node:crypto';
import { constants as fsc, promises as fsp } from 'node:fs';
import path from 'node:path';
import type { BuiltinsConfig } from '../config/types.js';
import { ToolError } from '../execution/tool-error.js';
import type { Principal } from '../types.js';

/**
 * The per-call context of every built-in tool: where the caller's workspace is, which extra roots it may
 * read, and the limits. Every path a model sends goes through `resolveInside` (lexical check, then realpath
 * check) and every file is opened through `openInside` (O_NOFOLLOW + re-check of the opened descriptor),
 * so a symlink swapped between the check and the open is still refused.
 */
export interface Workspace {
  /** Real path of the caller's workspace directory (created on first use). */
  readonly root: string;
  /** Real paths of the read-only extra roots that exist. */
  readonly readOnlyRoots: readonly string[];
  readonly limits: BuiltinsConfig['limits'];
  /** Resolves a model-supplied path to a real absolute path inside the allowed roots, or throws PERMISSION_DENIED. */
  resolveInside(input: string, options?: { write?: boolean }): Promise<string>;
  /** Opens a resolved path without following a final symlink and re-checks where the descriptor really points. */
  openInside(input: string, options: OpenOptions): Promise<OpenedFile>;
  /** Path as shown to the model: relative to the workspace root, or absolute inside a read-only root. */
  display(realPath: string): string;
}

export interface OpenOptions {
  write?: boolean;
  /** Write mode only: fail when the file exists. */
  exclusive?: boolean;
  append?: boolean;
}

export interface OpenedFile {
  readonly handle: fsp.FileHandle;
  readonly realPath: string;
  /** True when this open created the file. */
  readonly created: boolean;
}

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const BLOCKED_WRITE_SEGMENTS: readonly (readonly string[])[] = [['.git', 'hooks']];

/**
 * A principal's tenant/user as one directory name. Plain ids stay readable; anything else (dots, slashes,
 * `..`, unicode, overlong) becomes `_` + a SHA-256 prefix. Safe names never start with `_`, so the two
 * forms cannot collide and no id can ever name a parent directory.
 */
export function encodeSegment(id: string): string {
  if (SAFE_NAME.test(id)) return id;
  return `_${createHash('sha256').update(id, 'utf8').digest('hex').slice(0, 32)}`;
}

export function isInside(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent.endsWith(path.sep) ? parent : parent + path.sep);
}

/** A path that does not exist: a VALIDATION_ERROR callers can tell apart (e.g. AGENTS.md not written yet). */
export class NotFoundError extends ToolError {
  constructor(input: string) {
    super('VALIDATION_ERROR', `no such file or directory: ${input}`);
  }
}

export function denied(message: string): ToolError {
  return new ToolError('PERMISSION_DENIED', message);
}

function isErrno(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === code;
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
    const root = path.join(baseRoot, ...segments);
    await fsp.mkdir(root, { recursive: true, mode: 0o700 });
    // A tenant directory replaced by a symlink (e.g. by a sibling user's unsandboxed bash) is not trusted.
    if ((await fsp.realpath(root)) !== root) throw denied('workspace root is not a plain directory');
    return createWorkspace(root, readOnly, config.limits);
  };
}

export function createWorkspace(root: string, readOnlyRoots: readonly string[], limits: BuiltinsConfig['limits']): Workspace {
  const readable = [root, ...readOnlyRoots];
  const canRead = (real: string) => readable.some((allowed) => isInside(real, allowed));
  const canWrite = (real: string) => isInside(real, root) && !readOnlyRoots.some((ro) => isInside(real, ro));

  const lexical = (input: unknown): string => {
    if (typeof input !== 'string' || input.length === 0) throw new ToolError('VALIDATION_ERROR', 'path must be a non-empty string');
    if (input.includes('\0')) throw denied('path contains a NUL byte');
    // No decoding of any kind: `%2e%2e` is a file literally named so.
    const absolute = path.isAbsolute(input) ? path.resolve(input) : path.resolve(root, input);
    if (!canRead(absolute)) throw denied(`path is outside the workspace: ${input}`);
    return absolute;
  };

  const checkBlocked = (real: string, input: string) => {
    if (!isInside(real, root)) return;
    const parts = path.relative(root, real).split(path.sep);
    for (const blocked of BLOCKED_WRITE_SEGMENTS) {
      for (let i = 0; i + blocked.length <= parts.length; i += 1) {
        if (blocked.every((segment, j) => parts[i + j] === segment)) throw denied(`writing to ${blocked.join('/')} is not allowed: ${input}`);
      }
    }
  };

  const resolveInside = async (input: string, options: { write?: boolean } = {}): Promise<string> => {
    const absolute = lexical(input);
    if (!options.write) {
      let real: string;
      try {
        real = await fsp.realpath(absolute);
      } catch (error) {
        if (isErrno(error, 'ENOENT') || isErrno(error, 'ENOTDIR')) {
          // A dangling link still must not reveal whether its outside target exists.
          throw new NotFoundError(input);
        }
        throw error;
      }
      if (!canRead(real)) throw denied(`path resolves outside the workspace: ${input}`);
      return real;
    }
    // Writes: realpath of the deepest existing ancestor, then the missing tail appended lexically.
    const missing: string[] = [];
    let current = absolute;
    for (;;) {
      try {
        const real = await fsp.realpath(current);
        const target = path.join(real, ...missing.reverse());
        if (!canWrite(target)) throw denied(`path is not writable inside the workspace: ${input}`);
        checkBlocked(target, input);
        return target;
      } catch (error) {
        if (isErrno(error, 'ENOTDIR')) throw new ToolError('VALIDATION_ERROR', `a parent of the path is not a directory: ${input}`);
        if (!isErrno(error, 'ENOENT')) throw error;
        // realpath failed but lstat works: a dangling symlink that an O_CREAT would follow. Refuse.
        const linkStat = await fsp.lstat(current).catch(() => undefined);
        if (linkStat?.isSymbolicLink()) throw denied(`path goes through a dangling symlink: ${input}`);
        const parent = path.dirname(current);
        if (parent === current) throw denied(`path is not writable inside the workspace: ${input}`);
        missing.push(path.basename(current));
        current = parent;
      }
    }
  };

  const openInside = async (input: string, options: OpenOptions): Promise<OpenedFile> => {
    const target = await resolveInside(input, { write: options.write });
    let handle: fsp.FileHandle;
    let created = false;
    if (options.write) {
      await fsp.mkdir(path.dirname(target), { recursive: true });
      // Re-check the parent after mkdir: a directory swapped for a link meanwhile is caught here or by the fd check.
      if (!canWrite(await fsp.realpath(path.dirname(target)))) throw denied(`path is not writable inside the workspace: ${input}`);
      const base = fsc.O_WRONLY | fsc.O_NOFOLLOW | (options.append ? fsc.O_APPEND : 0);
      try {
        handle = await fsp.open(target, base | fsc.O_CREAT | fsc.O_EXCL, 0o644);
        created = true;
      } catch (error) {
        if (!isErrno(error, 'EEXIST')) throw openError(error, input);
        if (options.exclusive) throw new ToolError('VALIDATION_ERROR', `file already exists: ${input}`);
        try {
          // No O_TRUNC: truncation happens only after the descriptor passed the check below.
          handle = await fsp.open(target, base);
        } catch (inner) {
          throw openError(inner, input);
        }
      }
    } else {
      try {
        handle = await fsp.open(target, fsc.O_RDONLY | fsc.O_NOFOLLOW);
      } catch (error) {
        throw openError(error, input);
      }
    }
    const real = await descriptorPath(handle, target);
    if (!(options.write ? canWrite(real) : canRead(real))) {
      await handle.close();
      if (created) await fsp.unlink(real).catch(() => undefined);
      throw denied(`path changed while opening and now points outside the workspace: ${input}`);
    }
    return { handle, realPath: real, created };
  };

  const display = (real: string): string => {
    if (isInside(real, root)) return path.relative(root, real).split(path.sep).join('/') || '.';
    return real;
  };

  return Object.freeze({ root, readOnlyRoots, limits, resolveInside, openInside, display });
}

/** Where an open descriptor really is (Linux /proc); falls back to realpath of the name elsewhere. */
async function descriptorPath(handle: fsp.FileHandle, fallback: string): Promise<string> {
  try {
    return await fsp.readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    return fsp.realpath(fallback);
  }
}

function openError(error: unknown, input: string): ToolError | unknown {
  if (isErrno(error, 'ELOOP')) return denied(`path is a symlink: ${input}`);
  if (isErrno(error, 'ENOENT')) return new NotFoundError(input);
  if (isErrno(error, 'EISDIR')) return new ToolError('VALIDATION_ERROR', `path is a directory: ${input}`);
  return error;
}
