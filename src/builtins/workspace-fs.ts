import { constants as fsc, type Dirent, promises as fsp, type Stats } from 'node:fs';
import path from 'node:path';
import { ToolError } from '../call/tool-error.js';

/**
 * The one way the built-in file tools touch files. A path is never handed to the kernel whole: it is walked
 * from a held descriptor of its root, one component at a time, each folder opened with
 * O_DIRECTORY|O_NOFOLLOW, and every operation goes through `/proc/self/fd/<dir>/<name>`, which the kernel
 * resolves through the held folder (never through a path a tenant could swap for a symlink meanwhile) and
 * whose final component is never followed. Symlinks are resolved here, lexically inside the roots and with a
 * bounded number of hops; a link leading outside is refused without touching its target. Files are opened
 * O_NONBLOCK and checked with fstat before any read or write, so a FIFO, socket or device never blocks a
 * thread of the shared libuv pool.
 */

/** A directory the file tools may work in. */
export interface FsRoot {
  /** Host path of the root: what an absolute path or an absolute link target is matched against. */
  readonly path: string;
  /** Operator-configured directory the root is opened from (trusted). */
  readonly base: string;
  /** Components below `base` (tenant, user), opened O_NOFOLLOW like every other component. */
  readonly segments: readonly string[];
  /** The writable workspace shows paths relative to it; read-only roots show absolute paths. */
  readonly relativeDisplay: boolean;
}

export interface FsScope {
  readonly workspace: FsRoot;
  readonly readOnly: readonly FsRoot[];
}

/** A resolved path whose parent folder is held open; `name` is the final component (a symlink there, if any, was already followed). */
export interface Location {
  readonly dir: fsp.FileHandle;
  readonly name: string;
  readonly root: FsRoot;
  readonly parts: readonly string[];
  /** The path as shown to the model. */
  readonly shown: string;
  /** lstat of the final component; undefined when it does not exist. */
  readonly stat: Stats | undefined;
}

export interface ResolveOptions {
  /** Resolve for writing: inside the workspace only, never in a read-only root or .git/hooks. */
  write?: boolean;
  /** Create missing parent folders one by one through the held handles; their paths are added here. */
  createdDirs?: string[][];
}

/** A path that does not exist: a VALIDATION_ERROR callers can tell apart (e.g. AGENTS.md not written yet). */
export class NotFoundError extends ToolError {
  constructor(readonly path: string) {
    super('VALIDATION_ERROR', `no such file or directory: ${path}`);
  }
}

/** The final component exists but is not a folder where one was asked for (grep then searches the file). */
export class NotADirectoryError extends ToolError {
  constructor(shown: string) {
    super('VALIDATION_ERROR', `not a directory: ${shown}`);
  }
}

export function denied(message: string): ToolError {
  return new ToolError('PERMISSION_DENIED', message);
}

export function isInside(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent.endsWith(path.sep) ? parent : parent + path.sep);
}

// Linux's own limit on links in one lookup.
const MAX_LINK_HOPS = 40;
const BLOCKED_WRITE_SEGMENTS: readonly (readonly string[])[] = [['.git', 'hooks']];
const DIR_FLAGS = fsc.O_RDONLY | fsc.O_DIRECTORY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK;
const FILE_FLAGS = fsc.O_NOFOLLOW | fsc.O_NONBLOCK | fsc.O_NOCTTY;

/** `name` inside the held folder `dir`, as a path the kernel resolves through the descriptor. */
function at(dir: fsp.FileHandle, name: string): string {
  return `/proc/self/fd/${dir.fd}/${name}`;
}

/** Opens the folder `name` inside the held folder `dir`, never following a link there. */
export function openDirAt(dir: fsp.FileHandle, name: string): Promise<fsp.FileHandle> {
  return fsp.open(at(dir, name), DIR_FLAGS);
}

/** The entries of a held folder. */
export function listDir(dir: fsp.FileHandle): Promise<Dirent[]> {
  return fsp.readdir(`/proc/self/fd/${dir.fd}`, { withFileTypes: true });
}

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * A file-system failure as a ToolError that names only the path as the model sees it; the errno message
 * (which holds `/proc/self/fd/…` or host paths) is never passed on.
 */
export function fsError(error: unknown, shown: string): unknown {
  if (error instanceof ToolError) return error;
  switch (errnoOf(error)) {
    case 'ENOENT':
      return new NotFoundError(shown);
    case 'ELOOP':
      return denied(`path is a symlink: ${shown}`);
    case 'EISDIR':
      return new ToolError('VALIDATION_ERROR', `path is a directory: ${shown}`);
    case 'ENOTDIR':
      return new ToolError('VALIDATION_ERROR', `a parent of the path is not a directory: ${shown}`);
    case 'EEXIST':
      return new ToolError('VALIDATION_ERROR', `file already exists: ${shown}`);
    case 'ENXIO':
      return new ToolError('VALIDATION_ERROR', `not a regular file: ${shown}`);
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return denied(`permission denied: ${shown}`);
    case 'ENAMETOOLONG':
      return new ToolError('VALIDATION_ERROR', `path is too long: ${shown}`);
    case 'ENOTEMPTY':
      return new ToolError('VALIDATION_ERROR', `directory is not empty: ${shown}`);
    case 'ENOSPC':
    case 'EDQUOT':
      return new ToolError('TOOL_EXCEPTION', `no space left while writing ${shown}`);
    default:
      return new ToolError('TOOL_EXCEPTION', `file operation failed (${errnoOf(error) ?? 'error'}) on ${shown}`);
  }
}

interface Target {
  root: FsRoot;
  parts: string[];
}

function show(target: Target): string {
  if (target.root.relativeDisplay) return target.parts.join('/') || '.';
  return path.join(target.root.path, ...target.parts);
}

function rootsFor(scope: FsScope, write: boolean | undefined): readonly FsRoot[] {
  return write ? [scope.workspace] : [scope.workspace, ...scope.readOnly];
}

/** The root holding `absolute` (the most specific one), with the components below it. */
function place(scope: FsScope, absolute: string, write: boolean | undefined): Target | undefined {
  let best: FsRoot | undefined;
  for (const root of rootsFor(scope, write)) {
    if (isInside(absolute, root.path) && (!best || root.path.length > best.path.length)) best = root;
  }
  if (!best) return undefined;
  const target = { root: best, parts: path.relative(best.path, absolute).split(path.sep).filter((part) => part.length > 0) };
  if (write) checkWritable(scope, target, absolute);
  return target;
}

function checkWritable(scope: FsScope, target: Target, absolute: string): void {
  if (scope.readOnly.some((ro) => isInside(absolute, ro.path))) throw denied(`path is not writable inside the workspace: ${show(target)}`);
  for (const blocked of BLOCKED_WRITE_SEGMENTS) {
    for (let i = 0; i + blocked.length <= target.parts.length; i += 1) {
      if (blocked.every((segment, j) => target.parts[i + j] === segment)) throw denied(`writing to ${blocked.join('/')} is not allowed: ${show(target)}`);
    }
  }
}

/** The model's path, checked lexically (no decoding of any kind: `%2e%2e` is a file literally named so). */
function lexical(scope: FsScope, input: unknown, write: boolean | undefined): Target {
  if (typeof input !== 'string' || input.length === 0) throw new ToolError('VALIDATION_ERROR', 'path must be a non-empty string');
  if (input.includes('\0')) throw denied('path contains a NUL byte');
  const absolute = path.isAbsolute(input) ? path.resolve(input) : path.resolve(scope.workspace.path, input);
  const target = place(scope, absolute, write);
  if (target) return target;
  if (write && place(scope, absolute, false)) throw denied(`path is not writable inside the workspace: ${input}`);
  throw denied(`path is outside the workspace: ${input}`);
}

/** Where a symlink found at `parts[index]` leads, resolved lexically; outside every allowed root is refused. */
function followLink(scope: FsScope, target: Target, index: number, link: string, write: boolean | undefined, shown: string): Target {
  const absolute = path.resolve(target.root.path, ...target.parts.slice(0, index), link, ...target.parts.slice(index + 1));
  const next = place(scope, absolute, write);
  if (!next) throw denied(`path resolves outside the workspace: ${shown}`);
  return next;
}

/** Opens a root: its trusted base by path, then each segment without following links. */
export async function openRoot(root: FsRoot, create = false): Promise<fsp.FileHandle> {
  let dir = await fsp.open(root.base, fsc.O_RDONLY | fsc.O_DIRECTORY);
  try {
    for (const segment of root.segments) {
      if (create) await fsp.mkdir(at(dir, segment), { mode: 0o700 }).catch((error: unknown) => (errnoOf(error) === 'EEXIST' ? undefined : Promise.reject(error)));
      let child: fsp.FileHandle;
      try {
        child = await openDirAt(dir, segment);
      } catch (error) {
        // A tenant folder replaced by a symlink (e.g. by a sibling user's unsandboxed bash) is not trusted.
        if (errnoOf(error) === 'ENOTDIR' || errnoOf(error) === 'ELOOP') throw denied('workspace root is not a plain directory');
        throw error;
      }
      await dir.close();
      dir = child;
    }
    return dir;
  } catch (error) {
    await dir.close();
    throw fsError(error, '.');
  }
}

type Walked = { kind: 'dir'; dir: fsp.FileHandle } | { kind: 'link'; index: number; link: string };

/**
 * Opens `target.parts[0..count)` as folders from the root, each through the previous descriptor.
 * Stops at the first symlink (reported, not followed); creates missing folders when asked.
 */
async function openChain(target: Target, count: number, options: ResolveOptions, shown: string, finalIsDir: boolean): Promise<Walked> {
  let dir: fsp.FileHandle | undefined = await openRoot(target.root);
  try {
    for (let i = 0; i < count; i += 1) {
      const child = await openChild(dir, target.parts.slice(0, i + 1), options, shown, finalIsDir && i === count - 1);
      if (typeof child === 'string') return { kind: 'link', index: i, link: child };
      await dir.close();
      dir = child;
    }
    const walked: Walked = { kind: 'dir', dir };
    dir = undefined;
    return walked;
  } finally {
    await dir?.close();
  }
}

/**
 * The folder `parts`' last component inside `dir`, opened; or the text of the symlink found there. A component
 * that changes kind while it is looked at (another process swapping it) is looked at again, a few times.
 */
async function openChild(dir: fsp.FileHandle, parts: string[], options: ResolveOptions, shown: string, isFinal: boolean): Promise<fsp.FileHandle | string> {
  for (let attempt = 1; ; attempt += 1) {
    const found = await openChildOnce(dir, parts, options, shown, isFinal);
    if (found !== CHANGED) return found;
    if (attempt === 3) throw new ToolError('VALIDATION_ERROR', `path changed while it was being opened: ${shown}`);
  }
}

const CHANGED = Symbol('changed');

async function openChildOnce(dir: fsp.FileHandle, parts: string[], options: ResolveOptions, shown: string, isFinal: boolean): Promise<fsp.FileHandle | string | typeof CHANGED> {
  const name = parts[parts.length - 1]!;
  try {
    return await openDirAt(dir, name);
  } catch (error) {
    const code = errnoOf(error);
    if (code !== 'ENOTDIR' && code !== 'ELOOP' && code !== 'ENOENT') throw fsError(error, shown);
    if (code === 'ENOENT' && options.createdDirs) {
      // mkdir never follows its final component; the open below refuses whatever may have replaced it.
      const made = await fsp.mkdir(at(dir, name)).then(
        () => true,
        (inner: unknown) => (errnoOf(inner) === 'EEXIST' ? false : Promise.reject(fsError(inner, shown))),
      );
      if (made) options.createdDirs.push(parts);
      const child = await openDirAt(dir, name).catch(() => undefined);
      if (child) return child;
    }
  }
  const stat = await fsp.lstat(at(dir, name)).catch(() => undefined);
  // EINVAL: no longer a link; a folder now: the open above may succeed on the next look.
  if (stat?.isSymbolicLink()) return fsp.readlink(at(dir, name)).catch((error: unknown) => (errnoOf(error) === 'EINVAL' ? CHANGED : Promise.reject(fsError(error, shown))));
  if (stat?.isDirectory()) return CHANGED;
  if (!stat) throw new NotFoundError(shown);
  if (isFinal) throw new NotADirectoryError(shown);
  throw new ToolError('VALIDATION_ERROR', `a parent of the path is not a directory: ${shown}`);
}

/** Resolves `input` to its parent folder (held) and final name, following links inside the roots. */
async function locate(scope: FsScope, input: string, options: ResolveOptions): Promise<Location> {
  let target = lexical(scope, input, options.write);
  const requested = show(target);
  const shown = () => show(target);
  for (let hops = 0; ; hops += 1) {
    if (hops > MAX_LINK_HOPS) throw denied(`too many levels of symlinks: ${requested}`);
    if (target.parts.length === 0) throw new ToolError('VALIDATION_ERROR', `path is a directory: ${shown()}`);
    const last = target.parts.length - 1;
    const walked = await openChain(target, last, options, shown(), false);
    if (walked.kind === 'link') {
      target = followLink(scope, target, walked.index, walked.link, options.write, requested);
      continue;
    }
    const { dir } = walked;
    const name = target.parts[last]!;
    let stat: Stats | undefined;
    let link: string | undefined;
    try {
      stat = await fsp.lstat(at(dir, name)).catch((error: unknown) => (errnoOf(error) === 'ENOENT' ? undefined : Promise.reject(fsError(error, shown()))));
      if (stat?.isSymbolicLink()) link = await fsp.readlink(at(dir, name)).catch((error: unknown) => (errnoOf(error) === 'EINVAL' ? '' : Promise.reject(fsError(error, shown()))));
    } catch (error) {
      await dir.close();
      throw error;
    }
    if (link === '') {
      // Swapped from a link to something else between lstat and readlink: look again (counted as a hop).
      await dir.close();
      continue;
    }
    if (link === undefined) return { dir, name, root: target.root, parts: target.parts, shown: shown(), stat };
    await dir.close();
    target = followLink(scope, target, last, link, options.write, requested);
  }
}

/** Runs `use` with the located path; the held folder is closed afterwards, whatever happens. */
export async function withLocation<T>(scope: FsScope, input: string, options: ResolveOptions, use: (location: Location) => Promise<T>): Promise<T> {
  const location = await locate(scope, input, options);
  try {
    return await use(location);
  } finally {
    await location.dir.close();
  }
}

export interface HeldDirectory {
  readonly dir: fsp.FileHandle;
  readonly root: FsRoot;
  readonly parts: readonly string[];
  readonly shown: string;
}

/** Runs `use` with the folder `input` held open (links inside the roots followed); throws NotADirectoryError for a file. */
export async function withDirectory<T>(scope: FsScope, input: string, use: (held: HeldDirectory) => Promise<T>): Promise<T> {
  let target = lexical(scope, input, false);
  const requested = show(target);
  for (let hops = 0; ; hops += 1) {
    if (hops > MAX_LINK_HOPS) throw denied(`too many levels of symlinks: ${requested}`);
    const walked = await openChain(target, target.parts.length, {}, show(target), true);
    if (walked.kind === 'link') {
      target = followLink(scope, target, walked.index, walked.link, false, requested);
      continue;
    }
    try {
      return await use({ dir: walked.dir, root: target.root, parts: target.parts, shown: show(target) });
    } finally {
      await walked.dir.close();
    }
  }
}

/**
 * Opens `name` in the held folder for reading: O_NONBLOCK (a FIFO never blocks the open), never following a
 * link, and refused unless fstat says it is a regular file. The caller closes the handle.
 */
export async function openRegularAt(dir: fsp.FileHandle, name: string, shown: string): Promise<{ handle: fsp.FileHandle; stat: Stats }> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(at(dir, name), fsc.O_RDONLY | FILE_FLAGS);
  } catch (error) {
    throw fsError(error, shown);
  }
  return { handle, stat: await checkRegular(handle, shown) };
}

async function checkRegular(handle: fsp.FileHandle, shown: string): Promise<Stats> {
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) throw new ToolError('VALIDATION_ERROR', `path is a directory: ${shown}`);
    if (!stat.isFile()) throw new ToolError('VALIDATION_ERROR', `not a regular file: ${shown}`);
    return stat;
  } catch (error) {
    await handle.close();
    throw fsError(error, shown);
  }
}

/** Reads a whole regular file through its descriptor, at most `maxBytes` (a file growing meanwhile is refused). */
export async function readRegular(handle: fsp.FileHandle, size: number, maxBytes: number, shown: string): Promise<Buffer> {
  if (size > maxBytes) throw new ToolError('VALIDATION_ERROR', `file is larger than ${maxBytes} bytes: ${shown}`);
  const buffer = Buffer.alloc(Math.min(size, maxBytes) + 1);
  let filled = 0;
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
      if (filled === buffer.length) {
        if (filled > maxBytes) throw new ToolError('VALIDATION_ERROR', `file is larger than ${maxBytes} bytes: ${shown}`);
        break;
      }
    }
  } catch (error) {
    throw fsError(error, shown);
  }
  return buffer.subarray(0, filled);
}

export interface OpenForWrite {
  /** Fail when the file exists. */
  exclusive?: boolean;
  append?: boolean;
}

/** Opens (or creates) the located file for writing; a non-regular file is refused before anything is written. */
export async function openForWrite(location: Location, options: OpenForWrite): Promise<{ handle: fsp.FileHandle; created: boolean }> {
  const flags = fsc.O_WRONLY | FILE_FLAGS | (options.append ? fsc.O_APPEND : 0);
  const target = at(location.dir, location.name);
  let handle: fsp.FileHandle;
  let created = false;
  try {
    handle = await fsp.open(target, flags | fsc.O_CREAT | fsc.O_EXCL, 0o644);
    created = true;
  } catch (error) {
    if (errnoOf(error) !== 'EEXIST') throw fsError(error, location.shown);
    if (options.exclusive) throw new ToolError('VALIDATION_ERROR', `file already exists: ${location.shown}`);
    // No O_TRUNC: truncation happens only after fstat said it is a regular file.
    handle = await fsp.open(target, flags).catch((inner: unknown) => Promise.reject(fsError(inner, location.shown)));
  }
  await checkRegular(handle, location.shown);
  return { handle, created };
}

/** Removes the located file (unlink never follows the final component). */
export async function unlinkAt(location: Location): Promise<void> {
  await fsp.unlink(at(location.dir, location.name)).catch((error: unknown) => Promise.reject(fsError(error, location.shown)));
}

/** Removes the located folder if it is empty. */
export async function rmdirAt(location: Location): Promise<void> {
  await fsp.rmdir(at(location.dir, location.name)).catch((error: unknown) => Promise.reject(fsError(error, location.shown)));
}
