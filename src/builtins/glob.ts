import { setImmediate as nextTurn } from 'node:timers/promises';
import { ToolError } from '../call/tool-error.js';
import { compileGlob, type GlobMatcher } from '../patterns/glob.js';
import { MatchBudgetError } from '../patterns/linear-regex.js';
import { defineTool } from '../registry/define-tool.js';
import type { Tool } from '../call/types.js';
import { optionalInt, optionalString, requiredString, strictObject } from './args.js';
import type { BuiltinToolDeps } from './context.js';
import { walkFiles } from './walk.js';
import { withDirectory } from './workspace-fs.js';

const DEFAULT_MAX_RESULTS = 1000;
const MAX_PATTERN_LENGTH = 1000;
/** Entries matched between two turns given back to the event loop (and checks of the call's deadline). */
const ENTRIES_PER_TURN = 500;

/**
 * The glob on the linear-time engine (docs/security-model.md#untrusted-patterns-and-schemas); a glob the
 * engine cannot run, or one too complex for a path, is the caller's error.
 */
export function globMatcherOrThrow(glob: string, what: string): GlobMatcher {
  const matcher = compileGlob(glob);
  if (typeof matcher !== 'function') throw new ToolError('VALIDATION_ERROR', `${what} cannot be used: ${matcher.reason}`);
  return (path) => {
    try {
      return matcher(path);
    } catch (error) {
      if (error instanceof MatchBudgetError) throw new ToolError('VALIDATION_ERROR', `${what} is too complex for the path ${JSON.stringify(path.slice(0, 200))}: ${error.message}`);
      throw error;
    }
  };
}

export function createGlobTool(deps: BuiltinToolDeps): Tool {
  return defineTool({
    name: 'glob',
    source: 'builtin',
    description:
      'Find files by glob pattern (e.g. "src/**/*.ts"), matched against paths relative to `path` (default the workspace root). ' +
      'Skips .git and node_modules, never enters symlinked folders; results are sorted and relative to the workspace root.',
    inputSchema: strictObject(
      {
        pattern: { type: 'string', minLength: 1, maxLength: MAX_PATTERN_LENGTH },
        path: { type: 'string', minLength: 1, description: 'Folder to search in, relative to the workspace root' },
        maxResults: { type: 'integer', minimum: 1, maximum: 10000, default: DEFAULT_MAX_RESULTS },
      },
      ['pattern'],
    ),
    readOnly: true,
    idempotent: true,
    isConcurrencySafe: () => true,
    handler: async (args, ctx) => {
      const ws = await deps.workspaceFor(ctx.principal);
      const pattern = requiredString(args, 'pattern', 'glob');
      if (pattern.length > MAX_PATTERN_LENGTH) throw new ToolError('VALIDATION_ERROR', `pattern is longer than ${MAX_PATTERN_LENGTH} characters`);
      const maxResults = optionalInt(args, 'maxResults', 1, 10000) ?? DEFAULT_MAX_RESULTS;
      const isMatch = globMatcherOrThrow(pattern, 'the glob pattern');
      return withDirectory(ws.scope, optionalString(args, 'path') ?? '.', async (base) => {
        const prefix = base.shown === '.' ? '' : `${base.shown}/`;
        const matches: string[] = [];
        let truncated = false;
        const walk = walkFiles(base.dir);
        try {
          let step = await walk.next();
          for (let seen = 1; !step.done; step = await walk.next(), seen += 1) {
            // A folder's entries come without real I/O between them: give other requests their turn.
            if (seen % ENTRIES_PER_TURN === 0) {
              await nextTurn();
              if (ctx.signal.aborted) throw new ToolError('TIMEOUT', 'glob was aborted');
            }
            if (!isMatch(step.value.relative)) continue;
            if (matches.length >= maxResults) {
              truncated = true;
              break;
            }
            matches.push(prefix + step.value.relative);
          }
          if (step.done && step.value.exhausted) truncated = true;
        } finally {
          await walk.return({ exhausted: false }); // closes the folders a broken-off walk still holds
        }
        matches.sort();
        return { matches, count: matches.length, truncated };
      });
    },
  });
}
