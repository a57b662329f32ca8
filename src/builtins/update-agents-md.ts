import { ToolError } from '../call/tool-error.js';
import { defineTool } from '../registry/define-tool.js';
import type { Tool } from '../call/types.js';
import { optionalString, strictObject } from './args.js';
import type { BuiltinToolDeps } from './context.js';
import { readTextInside, writeTextInside } from './file-io.js';
import { NotFoundError } from './workspace-fs.js';

const FILE = 'AGENTS.md';
const ACTIONS = ['read', 'write', 'append'] as const;
type Action = (typeof ACTIONS)[number];

export function createUpdateAgentsMdTool(deps: BuiltinToolDeps): Tool {
  return defineTool({
    name: 'update_agents_md',
    source: 'builtin',
    description: 'Read, overwrite or append to AGENTS.md at the workspace root (notes and instructions for agents working here).',
    inputSchema: strictObject(
      {
        action: { type: 'string', enum: [...ACTIONS] },
        content: { type: 'string', description: 'Required for write and append' },
      },
      ['action'],
    ),
    destructive: true,
    // Reading is as harmless as read_file; writing must run alone.
    isConcurrencySafe: (args) => args.action === 'read',
    checkStructure: (args) => {
      if (!ACTIONS.includes(args.action as Action)) return `unsupported update_agents_md action: ${String(args.action)}`;
      if (args.action !== 'read' && typeof args.content !== 'string') return `update_agents_md ${String(args.action)} requires content`;
      return undefined;
    },
    handler: async (args, ctx) => {
      const ws = await deps.workspaceFor(ctx.principal);
      const action = args.action as Action;
      if (action === 'read') {
        try {
          const { text } = await readTextInside(ws, FILE);
          return { path: FILE, exists: true, content: text };
        } catch (error) {
          if (error instanceof NotFoundError) return { path: FILE, exists: false, content: '' };
          throw error;
        }
      }
      const content = optionalString(args, 'content');
      if (content === undefined) throw new ToolError('VALIDATION_ERROR', `update_agents_md ${action} requires content`);
      if (!ACTIONS.includes(action)) throw new ToolError('VALIDATION_ERROR', `unsupported update_agents_md action: ${String(action)}`);
      const written = await writeTextInside(ws, FILE, content, action === 'write' ? 'overwrite' : 'append');
      return { path: FILE, action, created: written.created, bytesWritten: written.bytesWritten };
    },
  });
}
