import { ToolError } from '../call/tool-error.js';
import { defineTool } from '../registry/define-tool.js';
import type { Tool } from '../call/types.js';
import { optionalInt, requiredString, splitText, strictObject } from './args.js';
import type { BuiltinToolDeps } from './context.js';
import { readTextInside } from './file-io.js';

export function createReadFileTool(deps: BuiltinToolDeps): Tool {
  return defineTool({
    name: 'read_file',
    source: 'builtin',
    description: 'Read a text file from the workspace. Lines are 1-based and inclusive; long content is cut at maxChars.',
    inputSchema: strictObject(
      {
        path: { type: 'string', minLength: 1, description: 'File path, relative to the workspace root' },
        startLine: { type: 'integer', minimum: 1, description: 'First line to return (1-based)' },
        endLine: { type: 'integer', minimum: 1, description: 'Last line to return (inclusive)' },
        maxChars: { type: 'integer', minimum: 1, description: 'Maximum characters of content (default and ceiling from config, 12000)' },
      },
      ['path'],
    ),
    readOnly: true,
    idempotent: true,
    isConcurrencySafe: () => true,
    checkStructure: (args) => (typeof args.path === 'string' && args.path.trim().length > 0 ? undefined : 'read_file requires a non-empty path'),
    handler: async (args, ctx) => {
      const ws = await deps.workspaceFor(ctx.principal);
      const path = requiredString(args, 'path', 'read_file');
      const startLine = optionalInt(args, 'startLine', 1) ?? 1;
      const requestedEnd = optionalInt(args, 'endLine', 1);
      const maxChars = Math.min(optionalInt(args, 'maxChars', 1) ?? ws.limits.maxReadChars, ws.limits.maxReadChars);
      if (requestedEnd !== undefined && requestedEnd < startLine) throw new ToolError('VALIDATION_ERROR', 'endLine must not be before startLine');
      const { text, path: shown } = await readTextInside(ws, path);
      const { lines } = splitText(text);
      if (startLine > Math.max(lines.length, 1)) {
        throw new ToolError('VALIDATION_ERROR', `startLine ${startLine} is past the end of the file (${lines.length} lines)`);
      }
      const endLine = Math.min(requestedEnd ?? lines.length, lines.length);
      const selected = lines.slice(startLine - 1, endLine).join('\n');
      const truncated = selected.length > maxChars;
      return {
        path: shown,
        content: truncated ? selected.slice(0, maxChars) : selected,
        startLine,
        endLine,
        totalLines: lines.length,
        truncated,
      };
    },
  });
}
