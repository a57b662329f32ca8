import { BackgroundProcesses, type ProcessInfo, type ProcessLogs, type ProcessOwner } from './background-processes.js';
import { CommandSpawner, type CommandTarget } from './command-spawner.js';
import { type ExecOptions, type ExecResult, OneShotCommands } from './one-shot-commands.js';
import type { CommandLauncher } from './sandbox.js';

/**
 * Runs `bash` commands: one-shot `exec` (one-shot-commands.ts) and owned background processes
 * (background-processes.ts). Every child is a process-group leader (detached) and watched by the process
 * sweeper (command-spawner.ts), so timeouts, stop, abort, the end of a call and closeAll() kill the whole
 * tree, and no command holds more than `maxProcessesPerCommand` processes.
 */
export interface ProcessManagerOptions {
  launcher: CommandLauncher;
  /** Running background processes per owner. */
  maxProcesses: number;
  logBufferChars?: number;
  stopGraceMs?: number;
  /** A background process older than this is killed (default 1 h). */
  maxLifetimeMs?: number;
  /** Live processes one command (exec or background) may hold; beyond it the command is killed (default 128). */
  maxProcessesPerCommand?: number;
  /** Set when commands may not run at all (e.g. no sandbox and no opt-in): the reason every call answers. */
  disabled?: string;
  shell?: string;
}

export interface ProcessManager {
  exec(target: CommandTarget, options: ExecOptions): Promise<ExecResult>;
  start(owner: ProcessOwner, target: CommandTarget): ProcessInfo;
  status(owner: ProcessOwner, processId: string): ProcessInfo;
  logs(owner: ProcessOwner, processId: string, offset: number, limit: number): ProcessLogs;
  write(owner: ProcessOwner, processId: string, input: string): Promise<{ processId: string; bytesWritten: number }>;
  stop(owner: ProcessOwner, processId: string): Promise<ProcessInfo>;
  list(owner: ProcessOwner): ProcessInfo[];
  /** Kills every child (exec and background) and waits for them; later starts are refused. */
  closeAll(): Promise<void>;
}

export function createProcessManager(options: ProcessManagerOptions): ProcessManager {
  const spawner = new CommandSpawner(options);
  const oneShots = new OneShotCommands(spawner);
  const background = new BackgroundProcesses(spawner, {
    maxProcesses: options.maxProcesses,
    logBufferChars: options.logBufferChars ?? 120_000,
    stopGraceMs: options.stopGraceMs ?? 1000,
    maxLifetimeMs: options.maxLifetimeMs ?? 3_600_000,
  });
  return {
    exec: (target, execOptions) => oneShots.run(target, execOptions),
    start: (owner, target) => background.start(owner, target),
    status: (owner, processId) => background.status(owner, processId),
    logs: (owner, processId, offset, limit) => background.logs(owner, processId, offset, limit),
    write: (owner, processId, input) => background.write(owner, processId, input),
    stop: (owner, processId) => background.stop(owner, processId),
    list: (owner) => background.list(owner),
    async closeAll() {
      spawner.shutdown();
      await Promise.all([oneShots.killAll(), background.killAll()]);
    },
  };
}
