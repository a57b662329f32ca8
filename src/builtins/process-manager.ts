import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import { ToolError } from '../execution/tool-error.js';
import { HeadTailBuffer, RingLog } from './output-buffers.js';
import { createProcessSweeper, killGroup, type TrackedCommand } from './process-tree.js';
import { type CommandLauncher, defaultShell, spawnSandboxed } from './sandbox.js';

/**
 * Runs `bash` commands: one-shot `exec` and owned background processes. Every child is a process-group
 * leader (detached) and watched by the process sweeper, so timeouts, stop, abort, the end of a call and
 * closeAll() kill the whole tree, and no command holds more than `maxProcessesPerCommand` processes.
 * Background processes belong to one (tenant, user): any other owner gets "unknown processId", exactly as
 * for an id that never existed, so ids cannot be probed across tenants.
 */
export interface ProcessOwner {
  tenant: string;
  user: string;
}

export interface CommandTarget {
  command: string;
  /** Real path of the working directory (already checked to be inside the workspace). */
  cwd: string;
  workspace: { root: string; readOnlyRoots: readonly string[] };
}

export interface ExecResult {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  timedOut: boolean;
  hint?: string;
}

export type ProcessState = 'RUNNING' | 'EXITED' | 'KILLED';

export interface ProcessInfo {
  processId: string;
  command: string;
  status: ProcessState;
  pid: number | undefined;
  startedAt: string;
  endedAt: string | undefined;
  exitCode: number | null;
  signal: string | null;
}

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
  exec(target: CommandTarget, options: { timeoutMs: number; maxOutputBytes: number; signal?: AbortSignal }): Promise<ExecResult>;
  start(owner: ProcessOwner, target: CommandTarget): ProcessInfo;
  status(owner: ProcessOwner, processId: string): ProcessInfo;
  logs(owner: ProcessOwner, processId: string, offset: number, limit: number): ProcessInfo & { content: string; offset: number; nextOffset: number; truncated: boolean };
  write(owner: ProcessOwner, processId: string, input: string): Promise<{ processId: string; bytesWritten: number }>;
  stop(owner: ProcessOwner, processId: string): Promise<ProcessInfo>;
  list(owner: ProcessOwner): ProcessInfo[];
  /** Kills every child (exec and background) and waits for them; later starts are refused. */
  closeAll(): Promise<void>;
}

interface Managed {
  id: string;
  owner: string;
  seq: number;
  command: string;
  child: ChildProcess;
  tracked: TrackedCommand;
  log: RingLog;
  startedAt: Date;
  endedAt: Date | undefined;
  exitCode: number | null;
  signal: string | null;
  exited: Promise<void>;
  /** Resolves when every holder of the output pipes is gone: the whole tree, not just the leader. */
  closed: Promise<void>;
  lifetime: NodeJS.Timeout;
}

const ownerKey = (owner: ProcessOwner) => JSON.stringify([owner.tenant, owner.user]);

function exitedPromise(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

function closedPromise(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('close', () => resolve());
    child.once('error', () => resolve());
  });
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export function createProcessManager(options: ProcessManagerOptions): ProcessManager {
  const logBufferChars = options.logBufferChars ?? 120_000;
  const stopGraceMs = options.stopGraceMs ?? 1000;
  const maxLifetimeMs = options.maxLifetimeMs ?? 3_600_000;
  const shell = options.shell ?? defaultShell();
  const maxPerCommand = options.maxProcessesPerCommand ?? 128;
  const sweeper = createProcessSweeper({ maxProcesses: maxPerCommand });
  const overLimitMessage = `the command had more than ${maxPerCommand} processes at once and was killed (limits.maxProcessesPerCommand)`;
  const processes = new Map<string, Managed>();
  const execChildren = new Map<ChildProcess, { closed: Promise<void>; tracked: TrackedCommand }>();
  let seq = 0;
  let closed = false;

  // Every command carries a marker in its environment, so the sweep finds a `setsid` escapee whose parent is gone.
  const launch = (target: CommandTarget, stdin: 'pipe' | 'ignore', onOverLimit: () => void): { child: ChildProcess; tracked: TrackedCommand } => {
    if (closed) throw new ToolError('TOOL_EXCEPTION', 'the process manager is shut down');
    const refusal = options.disabled ?? options.launcher.unavailable;
    if (refusal) throw new ToolError('TOOL_EXCEPTION', refusal);
    const id = randomBytes(12).toString('hex');
    const child = spawnSandboxed(options.launcher, { argv: [shell, '-c', target.command], cwd: target.cwd, workspace: target.workspace, writable: true }, [stdin, 'pipe', 'pipe'], { TOOLGATE_COMMAND_ID: id });
    return { child, tracked: sweeper.track(child, `TOOLGATE_COMMAND_ID=${id}`, onOverLimit) };
  };

  /** The whole command: its group at once, then whatever the sweep still finds of it. */
  const killCommand = (child: ChildProcess, tracked: TrackedCommand) => {
    killGroup(child, 'SIGKILL');
    tracked.killAll();
  };

  const info = (p: Managed): ProcessInfo => ({
    processId: p.id,
    command: p.command,
    status: p.endedAt === undefined ? 'RUNNING' : p.signal ? 'KILLED' : 'EXITED',
    pid: p.child.pid,
    startedAt: p.startedAt.toISOString(),
    endedAt: p.endedAt?.toISOString(),
    exitCode: p.exitCode,
    signal: p.signal,
  });

  const find = (owner: ProcessOwner, processId: string): Managed => {
    const p = processes.get(processId);
    if (!p || p.owner !== ownerKey(owner)) throw new ToolError('VALIDATION_ERROR', `unknown processId: ${processId}`);
    return p;
  };

  const terminate = async (p: Managed): Promise<void> => {
    if (p.endedAt !== undefined) return;
    killGroup(p.child, 'SIGTERM');
    const graceful = await Promise.race([p.exited.then(() => true), delay(stopGraceMs).then(() => false)]);
    if (!graceful) {
      killGroup(p.child, 'SIGKILL');
      await Promise.race([p.exited, delay(5000)]);
    }
  };

  // Forget the oldest finished records of an owner so a busy owner cannot grow the map without bound.
  const prune = (key: string) => {
    const finished = [...processes.values()].filter((p) => p.owner === key && p.endedAt !== undefined).sort((a, b) => a.seq - b.seq);
    const keep = Math.max(options.maxProcesses * 4, 16);
    for (const p of finished.slice(0, Math.max(0, finished.length - keep))) processes.delete(p.id);
  };

  return {
    exec(target, { timeoutMs, maxOutputBytes, signal }) {
      if (signal?.aborted) return Promise.reject(new ToolError('TIMEOUT', 'the call was aborted before the command started'));
      let overLimit = false;
      const { child, tracked } = launch(target, 'ignore', () => {
        overLimit = true;
        killCommand(child, tracked);
      });
      execChildren.set(child, { closed: closedPromise(child), tracked });
      const stdout = new HeadTailBuffer(maxOutputBytes);
      const stderr = new HeadTailBuffer(maxOutputBytes);
      child.stdout!.on('data', (chunk: Buffer) => stdout.push(chunk));
      child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk));
      let timedOut = false;
      let aborted = false;
      return new Promise<ExecResult>((resolve, reject) => {
        let drainTimer: NodeJS.Timeout | undefined;
        const timer = setTimeout(() => {
          timedOut = true;
          killCommand(child, tracked);
        }, timeoutMs);
        const onAbort = () => {
          aborted = true;
          killCommand(child, tracked);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        const finish = (code: number | null) => {
          clearTimeout(timer);
          clearTimeout(drainTimer);
          signal?.removeEventListener('abort', onAbort);
          execChildren.delete(child);
          // Nothing the command started outlives the call: `cmd &`, `setsid cmd`, `nohup cmd` included.
          killCommand(child, tracked);
          tracked.untrack();
          if (aborted) return reject(new ToolError('TIMEOUT', 'the call was aborted; the command was killed'));
          if (overLimit) return reject(new ToolError('TOOL_EXCEPTION', overLimitMessage));
          resolve({
            stdout: stdout.toString(),
            stderr: stderr.toString(),
            exitCode: timedOut ? null : code,
            timedOut,
            ...(timedOut ? { hint: `the command did not finish within ${timeoutMs} ms and was killed; run long commands with action "start" and read them with "logs"` } : {}),
          });
        };
        child.once('error', (error) => {
          clearTimeout(timer);
          execChildren.delete(child);
          tracked.untrack();
          reject(new ToolError('TOOL_EXCEPTION', `could not start the command: ${error.message}`));
        });
        child.once('close', (code) => finish(code));
        // Leftover children of a finished command may hold the pipes open: reap them and stop waiting.
        child.once('exit', (code) => {
          drainTimer = setTimeout(() => {
            killCommand(child, tracked);
            child.stdout?.destroy();
            child.stderr?.destroy();
            finish(code);
          }, 500);
          drainTimer.unref();
        });
      });
    },

    start(owner, target) {
      const key = ownerKey(owner);
      const running = [...processes.values()].filter((p) => p.owner === key && p.endedAt === undefined).length;
      if (running >= options.maxProcesses) {
        throw new ToolError('PERMISSION_DENIED', `too many background processes (max ${options.maxProcesses}); stop one first`);
      }
      const log = new RingLog(logBufferChars);
      const { child, tracked } = launch(target, 'pipe', () => {
        log.append(`\n[toolgate] ${overLimitMessage}\n`);
        killCommand(child, tracked);
      });
      const p: Managed = {
        id: `proc_${randomBytes(8).toString('hex')}`,
        owner: key,
        seq: (seq += 1),
        command: target.command,
        child,
        tracked,
        log,
        startedAt: new Date(),
        endedAt: undefined,
        exitCode: null,
        signal: null,
        exited: exitedPromise(child),
        closed: closedPromise(child),
        lifetime: setTimeout(() => killCommand(child, tracked), maxLifetimeMs),
      };
      p.lifetime.unref();
      for (const stream of [child.stdout!, child.stderr!]) {
        const decoder = new StringDecoder('utf8');
        stream.on('data', (chunk: Buffer) => log.append(decoder.write(chunk)));
        stream.on('end', () => log.append(decoder.end()));
      }
      child.stdin!.on('error', () => undefined); // EPIPE after exit is reported by write(), not thrown.
      child.once('error', (error) => {
        log.append(`\n[toolgate] could not start: ${error.message}\n`);
        tracked.untrack();
        p.endedAt ??= new Date();
      });
      child.once('exit', (code, signal) => {
        clearTimeout(p.lifetime);
        // A background command's leftovers end with it, as an exec's do with the call.
        killCommand(child, tracked);
        tracked.untrack();
        p.endedAt = new Date();
        p.exitCode = code;
        p.signal = signal;
      });
      processes.set(p.id, p);
      prune(key);
      return info(p);
    },

    status: (owner, processId) => info(find(owner, processId)),

    logs(owner, processId, offset, limit) {
      const p = find(owner, processId);
      return { ...info(p), ...p.log.read(offset, limit) };
    },

    async write(owner, processId, input) {
      const p = find(owner, processId);
      const stdin = p.child.stdin;
      if (p.endedAt !== undefined || !stdin || stdin.destroyed || !stdin.writable) {
        throw new ToolError('VALIDATION_ERROR', `process ${processId} is not running or its stdin is closed`);
      }
      await new Promise<void>((resolve, reject) => stdin.write(input, (error) => (error ? reject(new ToolError('TOOL_EXCEPTION', `write failed: ${error.message}`)) : resolve())));
      return { processId, bytesWritten: Buffer.byteLength(input, 'utf8') };
    },

    async stop(owner, processId) {
      const p = find(owner, processId);
      await terminate(p);
      return info(p);
    },

    list(owner) {
      const key = ownerKey(owner);
      return [...processes.values()].filter((p) => p.owner === key).sort((a, b) => a.seq - b.seq).map(info);
    },

    async closeAll() {
      closed = true;
      const execWaits = [...execChildren].map(([child, { closed, tracked }]) => {
        killCommand(child, tracked);
        return Promise.race([closed, delay(5000)]);
      });
      const waits = [...processes.values()].map(async (p) => {
        killCommand(p.child, p.tracked);
        await Promise.race([p.closed, delay(5000)]);
        clearTimeout(p.lifetime);
      });
      await Promise.all([...waits, ...execWaits]);
      processes.clear();
    },
  };
}
