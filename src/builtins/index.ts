import type { BuiltinsConfig } from '../config/types.js';
import type { ToolProvider, UpstreamStatus } from '../registry/provider.js';
import type { Tool } from '../types.js';
import { createApplyPatchTool } from './apply-patch.js';
import { createBashTool } from './bash.js';
import type { BuiltinToolDeps } from './context.js';
import { createEditTool } from './edit.js';
import { createGlobTool } from './glob.js';
import { createGrepTool } from './grep.js';
import { createProcessManager, type ProcessManager } from './process-manager.js';
import { createReadFileTool } from './read-file.js';
import { type CommandLauncher, createLauncher } from './sandbox.js';
import { createUpdateAgentsMdTool } from './update-agents-md.js';
import { createWorkspaceFactory } from './workspace.js';
import { createWriteFileTool } from './write-file.js';

export const BUILTIN_TOOL_NAMES = ['apply_patch', 'bash', 'edit', 'glob', 'grep', 'read_file', 'update_agents_md', 'write_file'] as const;

export interface BuiltinProviderDeps {
  /** Override the launcher (tests; a custom sandbox). Default: from `config.sandbox`. */
  launcher?: CommandLauncher;
  /** Grace between SIGTERM and SIGKILL for `bash stop` (default 1000 ms). */
  stopGraceMs?: number;
}

export type BuiltinProvider = ToolProvider & { readonly processes: ProcessManager; closeAll(): Promise<void> };

/**
 * All eight built-in tools. The provider never narrows: the registry decides per tenant
 * (`tenants.<t>.builtins`) which of them a principal sees. Each call computes its workspace from
 * `ctx.principal`, so one provider serves every tenant.
 */
export function createBuiltinProvider(config: BuiltinsConfig, deps: BuiltinProviderDeps = {}): BuiltinProvider {
  const launcher = deps.launcher ?? createLauncher(config.sandbox);
  const processes = createProcessManager({ launcher, maxProcesses: config.limits.maxProcesses, stopGraceMs: deps.stopGraceMs });
  const toolDeps: BuiltinToolDeps = { workspaceFor: createWorkspaceFactory(config) };
  const tools: readonly Tool[] = Object.freeze([
    createApplyPatchTool(toolDeps),
    createBashTool({ ...toolDeps, processes }),
    createEditTool(toolDeps),
    createGlobTool(toolDeps),
    createGrepTool(toolDeps),
    createReadFileTool(toolDeps),
    createUpdateAgentsMdTool(toolDeps),
    createWriteFileTool(toolDeps),
  ]);
  const closeAll = () => processes.closeAll();
  return {
    kind: 'builtin',
    processes,
    tools: () => tools,
    close: closeAll,
    closeAll,
    status(): UpstreamStatus[] {
      return [{ service: 'builtins-sandbox', kind: `sandbox:${launcher.mode}`, state: launcher.unavailable ? 'down' : 'ready', required: false, toolCount: tools.length, ...(launcher.unavailable ? { lastError: launcher.unavailable } : {}) }];
    },
  };
}
