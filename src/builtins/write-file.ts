import { ToolError } from '../call/tool-error.js';
import { defineTool } from '../registry/define-tool.js';
import type { Tool } from '../call/types.js';
import { optionalString, requiredString, stringArg, strictObject } from './args.js';
import type { BuiltinToolDeps } from './context.js';
import { type WriteMode, writeTextInside } from './file-io.js';

const MODES: readonly WriteMode[] = ['create', 'overwrite', 'append'];

export function createWriteFileTool(deps: BuiltinToolDeps): Tool {
  return defineTool({
    name: 'write_file',
    source: 'builtin',
    description: 'Write a text file in the workspace (parents are created). mode: create (fails if it exists), overwrite (default) or append.',
    inputSchema: strictObject(
      {
        path: { type: 'string', minLength: 1, description: 'File path, relative to the workspace root' },
        content: { type: 'string', description: 'Text to write' },
        mode: { type: 'string', enum: [...MODES], default: 'overwrite' },
      },
      ['path', 'content'],
    ),
    destructive: true,
    checkStructure: (args) => (typeof args.path === 'string' && args.path.trim().length > 0 ? undefined : 'write_file requires a non-empty path'),
    handler: async (args, ctx) => {
      const ws = await deps.workspaceFor(ctx.principal);
      const path = requiredString(args, 'path', 'write_file');
      const content = stringArg(args, 'content', 'write_file');
      const mode = (optionalString(args, 'mode') ?? 'overwrite') as WriteMode;
      if (!MODES.includes(mode)) throw new ToolError('VALIDATION_ERROR', `unsupported write mode: ${mode}`);
      if (Buffer.byteLength(content, 'utf8') > ws.limits.maxFileBytes) {
        throw new ToolError('VALIDATION_ERROR', `content is larger than ${ws.limits.maxFileBytes} bytes`);
      }
      const written = await writeTextInside(ws, path, content, mode);
      return {
        path: written.path,
        mode,
        created: written.created,
        appended: mode === 'append' && !written.created,
        bytesWritten: written.bytesWritten,
      };
    },
  });
}
