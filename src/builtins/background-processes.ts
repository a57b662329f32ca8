import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import { ToolError } from '../call/tool-error.js';
import { closedPromise, type Command, type CommandSpawner, type CommandTarget, delay } from './command-spawner.js';
import { killGroup } from './process-tree.js';
import { RingLog } from './output-buffers.js';

/**
 * Background processes belong to one (tenant, user): any other owner gets "unknown processId", exactly as
 * for an id that never existed, so ids cannot be probed across tenants.
 */
export interface ProcessOwner {
  tenant: string;
  user: string;
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

export interface ProcessLogs extends ProcessInfo {
  content: string;
  offset: number;
  nextOffset: number;
  truncated: boolean;
}

export interface BackgroundProcessOptions {
  /** Running background processes per owner. */
  maxProcesses: number;
  logBufferChars: number;
  stopGraceMs: number;
  /** A background process older than this is killed. */
  maxLifetimeMs: number;
}

const ownerKey = (owner: ProcessOwner) => JSON.stringify([owner.tenant, owner.user]);

function exitedPromise(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

/** One `bash` action `start`: a command with its output in a ring log, killed at the end of its lifetime. */
class BackgroundProcess {
  readonly startedAt = new Date();
  endedAt: Date | undefined;
  exitCode: number | null = null;
  signal: string | null = null;
  readonly exited: Promise<void>;
  /** Resolves when every holder of the output pipes is gone: the whole tree, not just the leader. */
  readonly closed: Promise<void>;
  private readonly lifetime: NodeJS.Timeout;

  constructor(
    readonly id: string,
    readonly owner: string,
    readonly seq: number,
    readonly commandLine: string,
    readonly command: Command,
    readonly log: RingLog,
    maxLifetimeMs: number,
  ) {
    const { child, tracked } = command;
    this.exited = exitedPromise(child);
    this.closed = closedPromise(child);
    this.lifetime = setTimeout(() => command.kill(), maxLifetimeMs);
    this.lifetime.unref();
    for (const stream of [child.stdout!, child.stderr!]) {
      const decoder = new StringDecoder('utf8');
      stream.on('data', (chunk: Buffer) => log.append(decoder.write(chunk)));
      stream.on('end', () => log.append(decoder.end()));
    }
    child.stdin!.on('error', () => undefined); // EPIPE after exit is reported by write(), not thrown.
    child.once('error', (error) => {
      log.append(`\n[toolgate] could not start: ${error.message}\n`);
      tracked.untrack();
      this.endedAt ??= new Date();
    });
    child.once('exit', (code, signal) => {
      clearTimeout(this.lifetime);
      // A background command's leftovers end with it, as an exec's do with the call.
      command.kill();
      tracked.untrack();
      this.endedAt = new Date();
      this.exitCode = code;
      this.signal = signal;
    });
  }

  get running(): boolean {
    return this.endedAt === undefined;
  }

  info(): ProcessInfo {
    return {
      processId: this.id,
      command: this.commandLine,
      status: this.running ? 'RUNNING' : this.signal ? 'KILLED' : 'EXITED',
      pid: this.command.child.pid,
      startedAt: this.startedAt.toISOString(),
      endedAt: this.endedAt?.toISOString(),
      exitCode: this.exitCode,
      signal: this.signal,
    };
  }

  /** SIGTERM to the group, SIGKILL after the grace period; resolves once the leader exited (or 5 s later). */
  async terminate(graceMs: number): Promise<void> {
    if (!this.running) return;
    killGroup(this.command.child, 'SIGTERM');
    const graceful = await Promise.race([this.exited.then(() => true), delay(graceMs).then(() => false)]);
    if (!graceful) {
      killGroup(this.command.child, 'SIGKILL');
      await Promise.race([this.exited, delay(5000)]);
    }
  }

  /** Kills the whole command now and resolves when its pipes close (at most 5 s). */
  async kill(): Promise<void> {
    this.command.kill();
    await Promise.race([this.closed, delay(5000)]);
    clearTimeout(this.lifetime);
  }
}

/** `bash` actions start, status, logs, write, stop and list: the background processes of every owner. */
export class BackgroundProcesses {
  private readonly processes = new Map<string, BackgroundProcess>();
  private seq = 0;

  constructor(
    private readonly spawner: CommandSpawner,
    private readonly options: BackgroundProcessOptions,
  ) {}

  start(owner: ProcessOwner, target: CommandTarget): ProcessInfo {
    const key = ownerKey(owner);
    const running = [...this.processes.values()].filter((p) => p.owner === key && p.running).length;
    if (running >= this.options.maxProcesses) {
      throw new ToolError('PERMISSION_DENIED', `too many background processes (max ${this.options.maxProcesses}); stop one first`);
    }
    const log = new RingLog(this.options.logBufferChars);
    const command = this.spawner.spawn(target, 'pipe', (over) => {
      log.append(`\n[toolgate] ${this.spawner.overLimitMessage}\n`);
      over.kill();
    });
    const id = `proc_${randomBytes(8).toString('hex')}`;
    const p = new BackgroundProcess(id, key, (this.seq += 1), target.command, command, log, this.options.maxLifetimeMs);
    this.processes.set(p.id, p);
    this.prune(key);
    return p.info();
  }

  status(owner: ProcessOwner, processId: string): ProcessInfo {
    return this.find(owner, processId).info();
  }

  logs(owner: ProcessOwner, processId: string, offset: number, limit: number): ProcessLogs {
    const p = this.find(owner, processId);
    return { ...p.info(), ...p.log.read(offset, limit) };
  }

  async write(owner: ProcessOwner, processId: string, input: string): Promise<{ processId: string; bytesWritten: number }> {
    const p = this.find(owner, processId);
    const stdin = p.command.child.stdin;
    if (!p.running || !stdin || stdin.destroyed || !stdin.writable) {
      throw new ToolError('VALIDATION_ERROR', `process ${processId} is not running or its stdin is closed`);
    }
    await new Promise<void>((resolve, reject) => stdin.write(input, (error) => (error ? reject(new ToolError('TOOL_EXCEPTION', `write failed: ${error.message}`)) : resolve())));
    return { processId, bytesWritten: Buffer.byteLength(input, 'utf8') };
  }

  async stop(owner: ProcessOwner, processId: string): Promise<ProcessInfo> {
    const p = this.find(owner, processId);
    await p.terminate(this.options.stopGraceMs);
    return p.info();
  }

  list(owner: ProcessOwner): ProcessInfo[] {
    const key = ownerKey(owner);
    return [...this.processes.values()]
      .filter((p) => p.owner === key)
      .sort((a, b) => a.seq - b.seq)
      .map((p) => p.info());
  }

  /** Kills every process now and resolves when their pipes close; the records are dropped. */
  killAll(): Promise<void> {
    const waits = [...this.processes.values()].map((p) => p.kill());
    return Promise.all(waits).then(() => this.processes.clear());
  }

  private find(owner: ProcessOwner, processId: string): BackgroundProcess {
    const p = this.processes.get(processId);
    if (!p || p.owner !== ownerKey(owner)) throw new ToolError('VALIDATION_ERROR', `unknown processId: ${processId}`);
    return p;
  }

  // Forget the oldest finished records of an owner so a busy owner cannot grow the map without bound.
  private prune(key: string): void {
    const finished = [...this.processes.values()].filter((p) => p.owner === key && !p.running).sort((a, b) => a.seq - b.seq);
    const keep = Math.max(this.options.maxProcesses * 4, 16);
    for (const p of finished.slice(0, Math.max(0, finished.length - keep))) this.processes.delete(p.id);
  }
}
