import path from 'node:path';
import picomatch from 'picomatch';
import { ToolError } from '../execution/tool-error.js';
import { defineTool } from '../registry/define-tool.js';
import type { Tool } from '../types.js';
import { optionalBoolean, optionalInt, optionalString, requiredString, strictObject } from './args.js';
import type { BuiltinToolDeps } from './context.js';
import { RIPGREP_MISSING, ripgrep, type RipgrepSearch } from './ripgrep.js';
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
        include: { type: 'string', minLength: 1, description: 'File-name glob' },
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

      // Where rg runs: the named folder, or the folder holding the named file (then rg reads only that
      // file). Resolved like every file-tool path; under bwrap rg then sees nothing but the caller's roots.
      const input = optionalString(args, 'path') ?? '.';
      const search: RipgrepSearch = { pattern, caseInsensitive: optionalBoolean(args, 'caseInsensitive'), cwd: '', include, onlyFile: undefined, maxFileBytes: ws.limits.maxFileBytes };
      let shown = (relative: string): string => relative;
      try {
        await withDirectory(ws.scope, input, async (held) => {
          search.cwd = path.join(held.root.path, ...held.parts);
          shown = (relative) => (held.shown === '.' ? relative : held.root.relativeDisplay ? `${held.shown}/${relative}` : path.join(held.shown, relative));
        });
      } catch (error) {
        if (!(error instanceof NotADirectoryError)) throw error;
        const found = await withLocation(ws.scope, input, {}, async (file) => {
          if (!file.stat?.isFile()) throw new ToolError('VALIDATION_ERROR', `not a regular file: ${file.shown}`);
          // A single file: the include glob applies to its name, as it would during a walk.
          if (include && !picomatch(include, { dot: true, basename: !include.includes('/') })(file.name)) return false;
          search.cwd = path.join(file.root.path, ...file.parts.slice(0, -1));
          search.onlyFile = file.name;
          shown = () => file.shown;
          return true;
        });
        if (!found) return emptyResult();
      }

      const run = { rgPath: deps.rgPath, launcher: deps.launcher, workspace: ws, deadlineMs: ws.limits.commandTimeoutMs, signal: ctx.signal };
      const result = await ripgrep(run, search, maxResults);
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
