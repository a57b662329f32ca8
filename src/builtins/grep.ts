import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { ToolError } from '../call/tool-error.js';
import { defineTool } from '../registry/define-tool.js';
import type { Tool } from '../call/types.js';
import { optionalBoolean, optionalInt, optionalString, requiredString, strictObject } from './args.js';
import type { BuiltinToolDeps } from './context.js';
import { globMatcherOrThrow } from './glob.js';
import { RIPGREP_MISSING, ripgrep, type RipgrepResult } from './ripgrep.js';
import type { CommandLauncher } from './sandbox.js';
import { NotADirectoryError, withDirectory, withLocation } from './workspace-fs.js';

const DEFAULT_MAX_RESULTS = 100;
const MAX_PATTERN_LENGTH = 1000;
const MAX_LINE_CHARS = 500;

export interface GrepDeps extends BuiltinToolDeps {
  /** How rg is started: inside the same sandbox as `bash` (workspace bound read-only) or bare. */
  launcher: CommandLauncher;
  /** Absolute path of the rg binary; undefined when ripgrep is not installed. */
  rgPath: string | undefined;
}

const emptyResult = () => ({ matches: [], filesSearched: 0, filesMatched: 0, totalMatches: 0, truncated: false });

/**
 * `grep` runs ripgrep in a child process, never the user's regex on the event loop: rg's engine is
 * linear-time, and the child (its whole process group) is killed at the call's deadline
 * (`limits.commandTimeoutMs`, or earlier when the call is aborted).
 */
export function createGrepTool(deps: GrepDeps): Tool {
  return defineTool({
    name: 'grep',
    source: 'builtin',
    description:
      'Search file contents with a regular expression (ripgrep / Rust regex syntax: no look-around or backreferences), line by line, ' +
      'under `path` (default the workspace root). `include` filters file names by glob (e.g. "*.ts"). ' +
      'Skips binary files, files over 10 MiB, .git and node_modules.',
    inputSchema: strictObject(
      {
        pattern: { type: 'string', minLength: 1, maxLength: MAX_PATTERN_LENGTH, description: 'Regular expression (Rust regex syntax)' },
        path: { type: 'string', minLength: 1 },
        include: { type: 'string', minLength: 1, maxLength: MAX_PATTERN_LENGTH, description: 'File-name glob' },
        caseInsensitive: { type: 'boolean', default: false },
        maxResults: { type: 'integer', minimum: 1, maximum: 10000, default: DEFAULT_MAX_RESULTS },
      },
      ['pattern'],
    ),
    readOnly: true,
    idempotent: true,
    isConcurrencySafe: () => true,
    handler: async (args, ctx) => {
      const ws = await deps.workspaceFor(ctx.principal);
      const pattern = requiredString(args, 'pattern', 'grep');
      if (pattern.length > MAX_PATTERN_LENGTH) throw new ToolError('VALIDATION_ERROR', `pattern is longer than ${MAX_PATTERN_LENGTH} characters`);
      const maxResults = optionalInt(args, 'maxResults', 1, 10000) ?? DEFAULT_MAX_RESULTS;
      const include = optionalString(args, 'include');
      if (!deps.rgPath) throw new ToolError('TOOL_EXCEPTION', RIPGREP_MISSING);
      if (deps.launcher.unavailable) throw new ToolError('TOOL_EXCEPTION', deps.launcher.unavailable);

      // rg runs in the named folder, or in the folder holding the named file (then it reads only that file).
      // The folder is resolved like every file-tool path and held open while rg starts there through its
      // descriptor. Under bwrap rg sees nothing but the caller's roots; under none a folder below the start
      // swapped for a symlink during the walk would be followed, which takes a process of the tenant's own,
      // i.e. a shell this mode only runs with allowUnsandboxedShell.
      const input = optionalString(args, 'path') ?? '.';
      const base = { pattern, caseInsensitive: optionalBoolean(args, 'caseInsensitive'), include, maxFileBytes: ws.limits.maxFileBytes };
      const run = { rgPath: deps.rgPath, launcher: deps.launcher, workspace: ws, deadlineMs: ws.limits.commandTimeoutMs, signal: ctx.signal };
      const searchIn = (dir: FileHandle, cwd: string, onlyFile: string | undefined) => ripgrep(run, { ...base, cwd, startIn: `/proc/self/fd/${dir.fd}`, onlyFile }, maxResults);
      let shown = (relative: string): string => relative;
      let result: RipgrepResult;
      try {
        result = await withDirectory(ws.scope, input, (held) => {
          shown = (relative) => (held.shown === '.' ? relative : held.root.relativeDisplay ? `${held.shown}/${relative}` : path.join(held.shown, relative));
          return searchIn(held.dir, path.join(held.root.path, ...held.parts), undefined);
        });
      } catch (error) {
        if (!(error instanceof NotADirectoryError)) throw error;
        const found = await withLocation(ws.scope, input, {}, async (file) => {
          if (!file.stat?.isFile()) throw new ToolError('VALIDATION_ERROR', `not a regular file: ${file.shown}`);
          // A single file: the include glob applies to its name, as it would during a walk.
          // Matched on the linear-time engine like `glob` (rg applies it during a walk, off the loop).
          if (include && !globMatcherOrThrow(include, 'the include glob')(file.name)) return undefined;
          shown = () => file.shown;
          return searchIn(file.dir, path.join(file.root.path, ...file.parts.slice(0, -1)), file.name);
        });
        if (!found) return emptyResult();
        result = found;
      }
      return {
        matches: result.lines.map(({ file, line, content }) => ({ file: shown(file), line, content: cutLine(content.replace(/\r$/, '')) })),
        filesSearched: result.filesSearched,
        filesMatched: result.filesMatched,
        totalMatches: result.totalMatches,
        truncated: result.totalMatches > result.lines.length,
      };
    },
  });
}

const cutLine = (line: string) => (line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line);
