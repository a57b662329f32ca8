import type { BuiltinsConfig } from '../config/types.js';
import type { ToolProvider, UpstreamStatus } from '../registry/tool-provider.js';
import type { Logger, Tool } from '../call/types.js';
import { createApplyPatchTool } from './apply-patch.js';
import { createBashTool } from './bash.js';
import type { BuiltinToolDeps } from './context.js';
import { createEditTool } from './edit.js';
import { createGlobTool } from './glob.js';
import { createGrepTool } from './grep.js';
import { createProcessManager, type ProcessManager } from './process-manager.js';
import { createReadFileTool } from './read-file.js';
import { type CommandLauncher, createLauncher, defaultSandboxMode, findExecutable } from './sandbox.js';
import { createUpdateAgentsMdTool } from './update-agents-md.js';
import { createWorkspaceFactory } from './workspace.js';
import { createWriteFileTool } from './write-file.js';

export const BUILTIN_TOOL_NAMES = ['apply_patch', 'bash', 'edit', 'glob', 'grep', 'read_file', 'update_agents_md', 'write_file'] as const;

export interface BuiltinProviderDeps {
  /** Override the launcher (tests; a custom sandbox). Default: from `config.sandbox`. */
  launcher?: CommandLauncher;
  /** Grace between SIGTERM and SIGKILL for `bash stop` (default 1000 ms). */
  stopGraceMs?: number;
  /** The rg binary grep runs (default: `rg` on PATH; null: pretend it is not installed). */
  rgPath?: string | null;
  /** Receives the one start-up warning an unsandboxed shell deserves. */
  log?: Pick<Logger, 'warn'>;
}

/** Logged once when a provider with an unsandboxed shell is built (start-up, and a reload that changes `builtins`). */
export const UNSANDBOXED_SHELL_WARNING =
  'builtins.allowUnsandboxedShell is true and builtins.sandbox is "none": bash commands run unsandboxed as toolgate\'s OS user and can read and change whatever it can (other tenants\' workspaces, the config file, secret files); use sandbox: bwrap for tenants you do not fully trust';

/** Why bash refuses every command under `sandbox: none` unless the config opts in. */
export const UNSANDBOXED_SHELL_REFUSED =
  'bash is disabled: builtins.sandbox is "none" (no bwrap sandbox) and builtins.allowUnsandboxedShell is not true; install bubblewrap, or set allowUnsandboxedShell: true for trusted tenants only';

export type BuiltinProvider = ToolProvider & { readonly processes: ProcessManager; closeAll(): Promise<void> };

/**
 * All eight built-in tools. The provider never narrows: the registry decides per tenant
 * (`tenants.<t>.builtins`) which of them a principal sees. Each call computes its workspace from
 * `ctx.principal`, so one provider serves every tenant.
 */
/** The built-ins' sandbox as an upstream in status listings. */
export const BUILTINS_SANDBOX = 'builtins-sandbox';

export function createBuiltinProvider(config: BuiltinsConfig, deps: BuiltinProviderDeps = {}): BuiltinProvider {
  const launcher = deps.launcher ?? createLauncher(config.sandbox ?? defaultSandboxMode());
  const unsandboxedShell = launcher.mode === 'none' && config.allowUnsandboxedShell;
  if (unsandboxedShell) deps.log?.warn(UNSANDBOXED_SHELL_WARNING);
  const processes = createProcessManager({
    launcher,
    maxProcesses: config.limits.maxProcesses,
    maxProcessesPerCommand: config.limits.maxProcessesPerCommand,
    stopGraceMs: deps.stopGraceMs,
    disabled: launcher.mode === 'none' && !unsandboxedShell ? UNSANDBOXED_SHELL_REFUSED : undefined,
  });
  const toolDeps: BuiltinToolDeps = { workspaceFor: createWorkspaceFactory(config) };
  const rgPath = deps.rgPath === null ? undefined : (deps.rgPath ?? findExecutable('rg'));
  const tools: readonly Tool[] = Object.freeze([
    createApplyPatchTool(toolDeps),
    createBashTool({ ...toolDeps, processes }),
    createEditTool(toolDeps),
    createGlobTool(toolDeps),
    createGrepTool({ ...toolDeps, launcher, rgPath }),
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
      return [{ service: BUILTINS_SANDBOX, kind: `sandbox:${launcher.mode}`, state: launcher.unavailable ? 'down' : 'ready', required: false, toolCount: tools.length, ...(launcher.unavailable ? { lastError: launcher.unavailable } : {}) }];
    },
  };
}
