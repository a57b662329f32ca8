import type { ChildProcess } from 'node:child_process';
import { ToolError } from '../call/tool-error.js';
import { killGroup } from './process-tree.js';
import { type CommandLauncher, type SandboxedProgram, spawnSandboxed } from './sandbox.js';
import { SKIPPED_DIRS } from './walk.js';

/**
 * Runs ripgrep for `grep`: a child process (inside the sandbox when there is one), so a user's regex never
 * runs on the event loop. rg's default engine is linear-time (finite automata, no backtracking); PCRE2 is
 * never enabled. Every run is killed, with its process group, at its deadline.
 */
export const RIPGREP_MISSING = 'grep needs ripgrep: install the "rg" binary (Debian/Ubuntu package "ripgrep")';

/** rg cuts longer lines to a preview, so no output record holds a whole 10 MiB line. */
const MAX_LINE_BYTES = 2000;
/** A record longer than this (path + line number + preview) means the output is not what we asked for. */
const MAX_RECORD_BYTES = 64 * 1024;
const MAX_STDERR_BYTES = 4096;

export interface RipgrepSearch {
  pattern: string;
  caseInsensitive: boolean;
  /** Real path of the folder rg runs in; output paths are relative to it (`./a/b.txt`). */
  cwd: string;
  /** `/proc/self/fd/N` of that folder, held open by the caller while rg starts. */
  startIn: string;
  /** File-name glob, relative to `cwd` when it holds a `/`. */
  include: string | undefined;
  /** Search only this file name directly inside `cwd` (a `path` naming a file). */
  onlyFile: string | undefined;
  maxFileBytes: number;
}

export interface RipgrepLine {
  /** Path relative to `cwd`, without the leading `./`. */
  file: string;
  line: number;
  content: string;
}

export interface RipgrepRun {
  rgPath: string;
  launcher: CommandLauncher;
  workspace: SandboxedProgram['workspace'];
  deadlineMs: number;
  signal: AbortSignal;
}

/** Backslash-escapes glob syntax so a file name matches only itself. */
function escapeGlob(name: string): string {
  return name.replace(/[\\*?[\]{}!]/g, (c) => `\\${c}`);
}

function commonArgs(search: RipgrepSearch): string[] {
  const args = ['--no-config', '--null', '--no-messages', '--hidden', '--no-ignore', '--no-follow', '--max-filesize', String(search.maxFileBytes)];
  if (search.onlyFile !== undefined) {
    args.push('--max-depth', '1', '--glob', `/${escapeGlob(search.onlyFile)}`);
  } else {
    if (search.include !== undefined) args.push('--glob', search.include);
    // Later globs win in rg, so these exclusions hold even for files the include glob selects.
    for (const dir of SKIPPED_DIRS) args.push('--glob', `!${escapeGlob(dir)}/`);
  }
  return args;
}

/** Matching lines: `path\0line:content\n`, in path order. */
function searchArgs(search: RipgrepSearch): string[] {
  return [
    ...commonArgs(search),
    '--line-number', '--with-filename', '--no-heading', '--color', 'never', '--sort', 'path',
    '--max-columns', String(MAX_LINE_BYTES), '--max-columns-preview',
    search.caseInsensitive ? '--ignore-case' : '--case-sensitive',
    '--regexp', search.pattern, '--', '.',
  ];
}

/**
 * Every file the search reads (binaries and oversized files excluded, as in the search itself): one
 * `path\0count\n` record per file, stopping at each file's first line.
 */
function countArgs(search: RipgrepSearch): string[] {
  return [...commonArgs(search), '--count', '--include-zero', '--max-count', '1', '--regexp', '', '--', '.'];
}

/**
 * Splits rg's `--null` output into records. A path may hold any byte but NUL, so the path is read up to
 * the NUL first and only then the rest of the record up to its newline.
 */
export class RecordParser {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly onRecord: (path: string, rest: string) => void) {}

  push(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let start = 0;
    for (;;) {
      const nul = this.pending.indexOf(0, start);
      const newline = nul < 0 ? -1 : this.pending.indexOf(10, nul + 1);
      if (newline < 0) break;
      this.onRecord(this.pending.toString('utf8', start, nul), this.pending.toString('utf8', nul + 1, newline));
      start = newline + 1;
    }
    this.pending = this.pending.subarray(start);
    if (this.pending.length > MAX_RECORD_BYTES) throw new ToolError('TOOL_EXCEPTION', 'ripgrep printed a record longer than expected');
  }
}

const relativeOf = (rgPath: string) => (rgPath.startsWith('./') ? rgPath.slice(2) : rgPath);

/** Runs rg once; every stdout chunk goes to `onStdout`. Answers TIMEOUT at the deadline or on abort. */
function runOnce(run: RipgrepRun, search: RipgrepSearch, args: string[], onStdout: (chunk: Buffer) => void): Promise<{ code: number | null; stderr: string }> {
  if (run.signal.aborted) return Promise.reject(new ToolError('TIMEOUT', 'grep was aborted'));
  let child: ChildProcess;
  try {
    child = spawnSandboxed(run.launcher, { argv: [run.rgPath, ...args], cwd: search.cwd, startIn: search.startIn, workspace: run.workspace, writable: false }, ['ignore', 'pipe', 'pipe']);
  } catch (error) {
    return Promise.reject(new ToolError('TOOL_EXCEPTION', `could not start ripgrep: ${(error as Error).message}`));
  }
  return new Promise((resolve, reject) => {
    let stderr = '';
    let settled = false;
    const settle = (error: ToolError | undefined, code: number | null = null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      run.signal.removeEventListener('abort', onAbort);
      if (error) {
        killGroup(child, 'SIGKILL');
        reject(error);
      } else {
        resolve({ code, stderr });
      }
    };
    const timer = setTimeout(() => settle(new ToolError('TIMEOUT', `grep did not finish within ${run.deadlineMs} ms; narrow the path or the pattern`)), run.deadlineMs);
    const onAbort = () => settle(new ToolError('TIMEOUT', 'grep was aborted'));
    run.signal.addEventListener('abort', onAbort, { once: true });
    child.stdout!.on('data', (chunk: Buffer) => {
      if (settled) return;
      try {
        onStdout(chunk);
      } catch (error) {
        settle(error instanceof ToolError ? error : new ToolError('TOOL_EXCEPTION', (error as Error).message));
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      if (stderr.length < MAX_STDERR_BYTES) stderr += chunk.toString('utf8');
    });
    child.once('error', (error) => settle(new ToolError('TOOL_EXCEPTION', `could not start ripgrep: ${error.message}`)));
    child.once('close', (code) => settle(undefined, code));
  });
}

/** rg's complaint about the pattern or glob, without its advice to enable PCRE2 (never done here). */
function explainFailure(stderr: string): ToolError {
  const text = stderr
    .split('\n')
    .filter((line) => line.trim() && !/pcre2/i.test(line))
    .slice(0, 6)
    .join('\n')
    .trim();
  if (/error parsing glob/i.test(text)) return new ToolError('VALIDATION_ERROR', `invalid include glob: ${text}`);
  if (/regex|pattern|literal/i.test(text)) return new ToolError('VALIDATION_ERROR', `invalid regular expression: ${text}`);
  return new ToolError('TOOL_EXCEPTION', `ripgrep failed: ${text || 'no message'}`);
}

export interface RipgrepResult {
  lines: RipgrepLine[];
  filesSearched: number;
  filesMatched: number;
  totalMatches: number;
}

/** Searches with rg; keeps the first `maxLines` matching lines and counts them all. */
export async function ripgrep(run: RipgrepRun, search: RipgrepSearch, maxLines: number): Promise<RipgrepResult> {
  const lines: RipgrepLine[] = [];
  let totalMatches = 0;
  let filesMatched = 0;
  let lastFile: string | undefined;
  const matches = new RecordParser((file, rest) => {
    totalMatches += 1;
    if (file !== lastFile) {
      filesMatched += 1;
      lastFile = file;
    }
    if (lines.length >= maxLines) return;
    const colon = rest.indexOf(':');
    lines.push({ file: relativeOf(file), line: Number(rest.slice(0, colon)), content: rest.slice(colon + 1) });
  });
  let filesSearched = 0;
  const counted = new RecordParser(() => {
    filesSearched += 1;
  });
  // Both runs at once; the first failure (e.g. the deadline) stops the other.
  const stop = new AbortController();
  const both = { ...run, signal: AbortSignal.any([run.signal, stop.signal]) };
  const runs = [
    runOnce(both, search, searchArgs(search), (chunk) => matches.push(chunk)),
    runOnce(both, search, countArgs(search), (chunk) => counted.push(chunk)),
  ];
  const outcomes = await Promise.all(runs).catch((error: unknown) => {
    stop.abort();
    throw error;
  });
  // 0: matches, 1: none; 2: an error. File-level errors are silenced (--no-messages), so a 2 with an
  // empty stderr means some file could not be read, which grep skips like `grep -r` does. Anything on
  // stderr with a non-zero code is a failure, e.g. bwrap exiting 1 where it cannot create namespaces
  // (which would otherwise read as "no match").
  for (const { code, stderr } of outcomes) {
    if (code !== 0 && stderr.trim()) throw explainFailure(stderr);
  }
  return { lines, filesSearched, filesMatched, totalMatches };
}
