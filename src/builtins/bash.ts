import { ToolError } from '../call/tool-error.js';
import { defineTool } from '../registry/define-tool.js';
import type { JsonObject, Tool } from '../call/types.js';
import { optionalInt, optionalString, requiredString, stringArg, strictObject } from './args.js';
import type { ProcessOwner } from './background-processes.js';
import type { BuiltinToolDeps } from './context.js';
import type { ProcessManager } from './process-manager.js';
import { denied, isInside } from './workspace.js';

export const BASH_ACTIONS = ['exec', 'start', 'status', 'logs', 'write', 'stop', 'list'] as const;
export type BashAction = (typeof BASH_ACTIONS)[number];
const READ_ONLY_ACTIONS: ReadonlySet<string> = new Set(['status', 'logs', 'list']);
const NEEDS_COMMAND: ReadonlySet<string> = new Set(['exec', 'start']);
const NEEDS_PROCESS: ReadonlySet<string> = new Set(['status', 'logs', 'stop', 'write']);
const DEFAULT_LOG_LIMIT = 12_000;

const actionOf = (args: JsonObject): unknown => args.action ?? 'exec';

/** The structural checks of docs/architecture.md#built-in-tools, first failure wins. */
export function checkBashStructure(args: JsonObject): string | undefined {
  const action = actionOf(args);
  if (typeof action !== 'string' || !(BASH_ACTIONS as readonly string[]).includes(action)) return `unsupported bash action: ${String(action)}`;
  if (NEEDS_COMMAND.has(action) && (typeof args.command !== 'string' || args.command.trim().length === 0)) return `bash ${action} requires a non-empty command`;
  if (NEEDS_PROCESS.has(action) && (typeof args.processId !== 'string' || args.processId.trim().length === 0)) return `bash ${action} requires processId`;
  return undefined;
}

export function createBashTool(deps: BuiltinToolDeps & { processes: ProcessManager }): Tool {
  return defineTool({
    name: 'bash',
    source: 'builtin',
    description:
      'Run shell commands in the workspace. action exec (default) runs `command` and returns {stdout, stderr, exitCode, timedOut}; ' +
      'start runs it in the background and returns a processId; status, logs (offset/limit), write (stdin `input`), stop and list manage background processes.',
    inputSchema: strictObject({
      // checkStructure runs before schema validation, so an unknown action still gets "unsupported bash action: <a>".
      action: { type: 'string', enum: [...BASH_ACTIONS], default: 'exec' },
      command: { type: 'string', description: 'Shell command (exec, start)' },
      cwd: { type: 'string', description: 'Working directory relative to the workspace root (exec, start)' },
      timeoutMs: { type: 'integer', minimum: 1, description: 'exec timeout; default and ceiling from config (30000)' },
      processId: { type: 'string', description: 'Background process id (status, logs, write, stop)' },
      offset: { type: 'integer', minimum: 0, description: 'logs: first character to return' },
      limit: { type: 'integer', minimum: 1, description: `logs: maximum characters (default ${DEFAULT_LOG_LIMIT})` },
      input: { type: 'string', description: 'write: text sent to stdin' },
    }),
    destructive: true,
    isConcurrencySafe: (args) => READ_ONLY_ACTIONS.has(String(actionOf(args))),
    checkStructure: checkBashStructure,
    handler: async (args, ctx) => {
      const problem = checkBashStructure(args);
      if (problem) throw new ToolError('VALIDATION_ERROR', problem);
      const action = actionOf(args) as BashAction;
      const owner: ProcessOwner = { tenant: ctx.principal.tenant, user: ctx.principal.user };
      const processes = deps.processes;
      switch (action) {
        case 'exec':
        case 'start': {
          const ws = await deps.workspaceFor(ctx.principal);
          const command = requiredString(args, 'command', 'bash');
          const cwd = await ws.resolveInside(optionalString(args, 'cwd') ?? '.');
          // Commands start in the writable workspace, never in a read-only root.
          if (!isInside(cwd, ws.root)) throw denied('cwd must be inside the workspace');
          const target = { command, cwd, workspace: ws };
          if (action === 'start') return processes.start(owner, target);
          const limit = ws.limits.commandTimeoutMs;
          const timeoutMs = Math.min(optionalInt(args, 'timeoutMs', 1) ?? limit, limit);
          return processes.exec(target, { timeoutMs, maxOutputBytes: ws.limits.maxOutputBytes, signal: ctx.signal });
        }
        case 'status':
          return processes.status(owner, requiredString(args, 'processId', 'bash'));
        case 'logs':
          return processes.logs(owner, requiredString(args, 'processId', 'bash'), optionalInt(args, 'offset', 0) ?? 0, optionalInt(args, 'limit', 1) ?? DEFAULT_LOG_LIMIT);
        case 'write':
          return processes.write(owner, requiredString(args, 'processId', 'bash'), stringArg(args, 'input', 'bash'));
        case 'stop':
          return processes.stop(owner, requiredString(args, 'processId', 'bash'));
        case 'list':
          return { processes: processes.list(owner) };
      }
    },
  });
}
