import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { ToolError } from '../call/tool-error.js';
import { createProcessSweeper, killGroup, type ProcessSweeper, type TrackedCommand } from './process-tree.js';
import { type CommandLauncher, defaultShell, spawnSandboxed } from './sandbox.js';

export interface CommandTarget {
  command: string;
  /** Real path of the working directory (already checked to be inside the workspace). */
  cwd: string;
  workspace: { root: string; readOnlyRoots: readonly string[] };
}

export interface CommandSpawnerOptions {
  launcher: CommandLauncher;
  /** Live processes one command may hold; beyond it the command is killed (default 128). */
  maxProcessesPerCommand?: number;
  /** Set when commands may not run at all (e.g. no sandbox and no opt-in): the reason every call answers. */
  disabled?: string;
  shell?: string;
}

/** One running `bash -c` command: its process-group leader and the sweeper's watch over everything it starts. */
export class Command {
  constructor(
    readonly child: ChildProcess,
    readonly tracked: TrackedCommand,
  ) {}

  /** The whole command: its group at once, then whatever the sweep still finds of it. */
  kill(): void {
    killGroup(this.child, 'SIGKILL');
    this.tracked.killAll();
  }
}

/** Starts commands in the sandbox, each a process-group leader watched by one process sweeper. */
export class CommandSpawner {
  readonly overLimitMessage: string;
  private readonly sweeper: ProcessSweeper;
  private readonly shell: string;
  private shutDown = false;

  constructor(private readonly options: CommandSpawnerOptions) {
    const maxPerCommand = options.maxProcessesPerCommand ?? 128;
    this.sweeper = createProcessSweeper({ maxProcesses: maxPerCommand });
    this.shell = options.shell ?? defaultShell();
    this.overLimitMessage = `the command had more than ${maxPerCommand} processes at once and was killed (limits.maxProcessesPerCommand)`;
  }

  /**
   * Every command carries a marker in its environment, so the sweep finds a `setsid` escapee whose parent
   * is gone. `onOverLimit` runs when the command holds more than `maxProcessesPerCommand` processes.
   */
  spawn(target: CommandTarget, stdin: 'pipe' | 'ignore', onOverLimit: (command: Command) => void): Command {
    if (this.shutDown) throw new ToolError('TOOL_EXCEPTION', 'the process manager is shut down');
    const refusal = this.options.disabled ?? this.options.launcher.unavailable;
    if (refusal) throw new ToolError('TOOL_EXCEPTION', refusal);
    const id = randomBytes(12).toString('hex');
    const child = spawnSandboxed(
      this.options.launcher,
      { argv: [this.shell, '-c', target.command], cwd: target.cwd, workspace: target.workspace, writable: true },
      [stdin, 'pipe', 'pipe'],
      { TOOLGATE_COMMAND_ID: id },
    );
    const command: Command = new Command(child, this.sweeper.track(child, `TOOLGATE_COMMAND_ID=${id}`, () => onOverLimit(command)));
    return command;
  }

  /** Refuses every later spawn. */
  shutdown(): void {
    this.shutDown = true;
  }
}

/** Resolves when every holder of the child's output pipes is gone: the whole tree, not just the leader. */
export function closedPromise(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('close', () => resolve());
    child.once('error', () => resolve());
  });
}

export const delay = (ms: number): Promise<void> => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
