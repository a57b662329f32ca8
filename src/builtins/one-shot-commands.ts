import { ToolError } from '../call/tool-error.js';
import { closedPromise, type Command, type CommandSpawner, type CommandTarget, delay } from './command-spawner.js';
import { HeadTailBuffer } from './output-buffers.js';

export interface ExecOptions {
  timeoutMs: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
}

export interface ExecResult {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  timedOut: boolean;
  hint?: string;
}

/** How long a finished command's leftovers may keep its pipes open before they are reaped. */
const PIPE_DRAIN_MS = 500;

/**
 * `bash` action `exec`: one command run to its end within the call. Nothing it started outlives the call
 * (`cmd &`, `setsid cmd`, `nohup cmd` included); the output keeps its head and tail within the byte cap.
 */
export class OneShotCommands {
  /** Each running command with the promise of its pipes closing, so a shutdown can wait for it. */
  private readonly running = new Map<Command, Promise<void>>();

  constructor(private readonly spawner: CommandSpawner) {}

  run(target: CommandTarget, { timeoutMs, maxOutputBytes, signal }: ExecOptions): Promise<ExecResult> {
    if (signal?.aborted) return Promise.reject(new ToolError('TIMEOUT', 'the call was aborted before the command started'));
    let overLimit = false;
    const command = this.spawner.spawn(target, 'ignore', (over) => {
      overLimit = true;
      over.kill();
    });
    const { child, tracked } = command;
    this.running.set(command, closedPromise(child));
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
        command.kill();
      }, timeoutMs);
      const onAbort = () => {
        aborted = true;
        command.kill();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const finish = (code: number | null) => {
        clearTimeout(timer);
        clearTimeout(drainTimer);
        signal?.removeEventListener('abort', onAbort);
        this.running.delete(command);
        command.kill();
        tracked.untrack();
        if (aborted) return reject(new ToolError('TIMEOUT', 'the call was aborted; the command was killed'));
        if (overLimit) return reject(new ToolError('TOOL_EXCEPTION', this.spawner.overLimitMessage));
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
        this.running.delete(command);
        tracked.untrack();
        reject(new ToolError('TOOL_EXCEPTION', `could not start the command: ${error.message}`));
      });
      child.once('close', (code) => finish(code));
      // Leftover children of a finished command may hold the pipes open: reap them and stop waiting.
      child.once('exit', (code) => {
        drainTimer = setTimeout(() => {
          command.kill();
          child.stdout?.destroy();
          child.stderr?.destroy();
          finish(code);
        }, PIPE_DRAIN_MS);
        drainTimer.unref();
      });
    });
  }

  /** Kills every running command now and resolves when their pipes close (at most 5 s each). */
  killAll(): Promise<void> {
    const waits = [...this.running].map(([command, closed]) => {
      command.kill();
      return Promise.race([closed, delay(5000)]);
    });
    return Promise.all(waits).then(() => undefined);
  }
}
