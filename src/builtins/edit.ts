import { ToolError } from '../call/tool-error.js';
import { defineTool } from '../registry/define-tool.js';
import type { Tool } from '../call/types.js';
import { optionalBoolean, requiredString, stringArg, strictObject } from './args.js';
import type { BuiltinToolDeps } from './context.js';
import { readTextInside, writeTextInside } from './file-io.js';

function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count += 1;
  return count;
}

export function createEditTool(deps: BuiltinToolDeps): Tool {
  return defineTool({
    name: 'edit',
    source: 'builtin',
    description: 'Replace an exact string in a workspace file. old_string must occur exactly once unless replaceAll is true.',
    inputSchema: strictObject(
      {
        path: { type: 'string', minLength: 1 },
        old_string: { type: 'string', minLength: 1, description: 'Exact text to replace' },
        new_string: { type: 'string', description: 'Replacement text' },
        replaceAll: { type: 'boolean', default: false },
      },
      ['path', 'old_string', 'new_string'],
    ),
    destructive: true,
    handler: async (args, ctx) => {
      const ws = await deps.workspaceFor(ctx.principal);
      const path = requiredString(args, 'path', 'edit');
      let oldString = stringArg(args, 'old_string', 'edit');
      let newString = stringArg(args, 'new_string', 'edit');
      const replaceAll = optionalBoolean(args, 'replaceAll');
      if (oldString.length === 0) throw new ToolError('VALIDATION_ERROR', 'old_string must not be empty');
      if (oldString === newString) throw new ToolError('VALIDATION_ERROR', 'old_string and new_string are identical');
      const { text, path: shown } = await readTextInside(ws, path);
      let count = countOccurrences(text, oldString);
      // Models send "\n"; a CRLF file gets the same edit with its own line ending.
      if (count === 0 && text.includes('\r\n') && oldString.includes('\n') && !oldString.includes('\r\n')) {
        oldString = oldString.replaceAll('\n', '\r\n');
        newString = newString.replaceAll('\r\n', '\n').replaceAll('\n', '\r\n');
        count = countOccurrences(text, oldString);
      }
      if (count === 0) throw new ToolError('VALIDATION_ERROR', `old_string not found in ${shown}`);
      if (count > 1 && !replaceAll) {
        throw new ToolError('VALIDATION_ERROR', `old_string occurs ${count} times in ${shown}; add context to make it unique or set replaceAll`);
      }
      const updated = replaceAll ? text.split(oldString).join(newString) : text.replace(oldString, () => newString);
      const written = await writeTextInside(ws, path, updated, 'overwrite');
      return { path: written.path, replacements: replaceAll ? count : 1 };
    },
  });
}
