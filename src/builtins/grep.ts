import type { FileHandle } from 'node:fs/promises';
import vm from 'node:vm';
import picomatch from 'picomatch';
import { ToolError } from '../execution/tool-error.js';
import { defineTool } from '../registry/define-tool.js';
import type { Tool } from '../types.js';
import { optionalBoolean, optionalInt, optionalString, requiredString, strictObject } from './args.js';
import type { BuiltinToolDeps } from './context.js';
import { walkFiles } from './walk.js';
import { NotADirectoryError, openRegularAt, readRegular, withDirectory, withLocation } from './workspace-fs.js';

const DEFAULT_MAX_RESULTS = 100;
const MAX_PATTERN_LENGTH = 1000;
const MAX_LINE_CHARS = 500;
const BINARY_SNIFF_BYTES = 8000;
// Nested quantifiers such as (a+)+ or (\w*)* are the classic exponential-backtracking shapes.
const NESTED_QUANTIFIER = /\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)\s*(?:[+*]|\{\d+,\d*\})/;

export interface GrepOptions {
  /** Wall-clock budget for one file's regex work; V8 interrupts a runaway match at this point. */
  perFileTimeMs?: number;
}

// Runs inside a separate V8 context so `vm`'s timeout can interrupt a catastrophic regex mid-match.
const SEARCH = new vm.Script(`(() => { const hits = []; for (let i = 0; i < lines.length; i++) if (re.test(lines[i])) hits.push(i); return hits; })()`);

export function compileGrepPattern(pattern: string, caseInsensitive: boolean): RegExp {
  if (pattern.length > MAX_PATTERN_LENGTH) throw new ToolError('VALIDATION_ERROR', `pattern is longer than ${MAX_PATTERN_LENGTH} characters`);
  if (NESTED_QUANTIFIER.test(pattern)) throw new ToolError('VALIDATION_ERROR', 'pattern has nested quantifiers (catastrophic backtracking risk); simplify it');
  try {
    return new RegExp(pattern, caseInsensitive ? 'i' : '');
  } catch (error) {
    throw new ToolError('VALIDATION_ERROR', `invalid regular expression: ${(error as Error).message}`);
  }
}

export function createGrepTool(deps: BuiltinToolDeps, options: GrepOptions = {}): Tool {
  const perFileTimeMs = options.perFileTimeMs ?? 1000;
  return defineTool({
    name: 'grep',
    source: 'builtin',
    description:
      'Search file contents with a regular expression, line by line, under `path` (default the workspace root). ' +
      '`include` filters file names by glob (e.g. "*.ts"). Skips binary files, files over 10 MiB, .git and node_modules.',
    inputSchema: strictObject(
      {
        pattern: { type: 'string', minLength: 1, maxLength: MAX_PATTERN_LENGTH, description: 'JavaScript regular expression' },
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
      const re = compileGrepPattern(requiredString(args, 'pattern', 'grep'), optionalBoolean(args, 'caseInsensitive'));
      const maxResults = optionalInt(args, 'maxResults', 1, 10000) ?? DEFAULT_MAX_RESULTS;
      const include = optionalString(args, 'include');
      const includeMatch = include ? picomatch(include, { dot: true, basename: !include.includes('/') }) : () => true;
      const base = optionalString(args, 'path') ?? '.';
      const context = vm.createContext({ re, lines: [] as string[] });

      const matches: { file: string; line: number; content: string }[] = [];
      let filesSearched = 0;
      let filesMatched = 0;
      let totalMatches = 0;
      let truncated = false;

      // A file named by `path` itself answers its error (a FIFO, say); files met on the walk are skipped quietly.
      const searchFile = async (dir: FileHandle, name: string, shown: string, named = false) => {
        const text = await readSearchable(dir, name, shown, ws.limits.maxFileBytes, named);
        if (text === undefined) return;
        filesSearched += 1;
        const lines = text.split('\n');
        context.lines = lines;
        let hits: number[];
        try {
          hits = SEARCH.runInContext(context, { timeout: perFileTimeMs }) as number[];
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
            throw new ToolError('VALIDATION_ERROR', `pattern took longer than ${perFileTimeMs} ms on ${shown}; simplify it`);
          }
          throw error;
        }
        if (hits.length === 0) return;
        filesMatched += 1;
        totalMatches += hits.length;
        for (const index of hits) {
          if (matches.length >= maxResults) {
            truncated = true;
            break;
          }
          const line = lines[index]!.replace(/\r$/, '');
          matches.push({ file: shown, line: index + 1, content: line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line });
        }
      };

      try {
        await withDirectory(ws.scope, base, async (held) => {
          const prefix = held.shown === '.' ? '' : `${held.shown}/`;
          const walk = walkFiles(held.dir);
          try {
            let step = await walk.next();
            for (; !step.done; step = await walk.next()) {
              if (ctx.signal.aborted) throw new ToolError('TIMEOUT', 'grep was aborted');
              const entry = step.value;
              if (entry.kind === 'file' && includeMatch(entry.relative)) await searchFile(entry.dir, entry.name, prefix + entry.relative);
            }
            if (step.value.exhausted) truncated = true;
          } finally {
            await walk.return({ exhausted: false }); // closes the folders a broken-off walk still holds
          }
        });
      } catch (error) {
        if (!(error instanceof NotADirectoryError)) throw error;
        await withLocation(ws.scope, base, {}, (file) => searchFile(file.dir, file.name, file.shown, true));
      }
      return { matches, filesSearched, filesMatched, totalMatches, truncated };
    },
  });
}

/** The file's text, or undefined when it is too large, binary, or not a regular file (checked on the descriptor). */
async function readSearchable(dir: FileHandle, name: string, shown: string, maxBytes: number, named: boolean): Promise<string | undefined> {
  let opened;
  try {
    opened = await openRegularAt(dir, name, shown);
  } catch (error) {
    if (named) throw error;
    return undefined;
  }
  try {
    if (opened.stat.size > maxBytes) return undefined;
    const buffer = await readRegular(opened.handle, opened.stat.size, maxBytes, shown).catch(() => undefined);
    if (!buffer || buffer.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return undefined;
    return buffer.toString('utf8');
  } finally {
    await opened.handle.close();
  }
}
