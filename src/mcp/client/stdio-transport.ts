// The client side of a stdio MCP server, behind the SDK's public Transport interface: spawn the child,
// newline-delimited JSON-RPC over its stdin/stdout (the SDK's serializeMessage out; in, ReadBuffer's framing
// without its redundant schema parse, json-lines.ts),
// its stderr to the log line by line, and the SDK's close sequence (end stdin, then SIGTERM, then SIGKILL).
//
// Unlike the SDK's StdioClientTransport, the writes of one event-loop turn reach the child together.
// A pipe write is a system call that wakes the upstream, which then reads, parses and answers one request
// at a time; under concurrent load (many calls arriving in one poll phase) that is a syscall and an
// upstream wake-up per call. The first send of a turn corks stdin and a setImmediate (after the poll
// phase that delivered the requests) uncorks it, so the turn's messages leave in one writev and the
// upstream reads them in one go. A lone call waits at most until the end of the current loop turn.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { serializeMessage, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { JsonLineReader } from './json-lines.js';

export interface StdioServer {
  command: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd?: string | undefined;
}

const WRITTEN: Promise<void> = Promise.resolve();

/** How long close() waits for the child after ending its stdin, and again after SIGTERM. */
const EXIT_GRACE_MS = 2_000;

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('close', () => resolve());
  });
}

function graceful(child: ChildProcess): Promise<boolean> {
  return Promise.race([exited(child).then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), EXIT_GRACE_MS).unref())]);
}

export class CoalescingStdioTransport implements Transport {
  onclose?: Transport['onclose'];
  onerror?: Transport['onerror'];
  onmessage?: Transport['onmessage'];
  private child: ChildProcess | undefined;
  private readonly reads = new JsonLineReader();
  private corked = false;

  constructor(
    private readonly server: StdioServer,
    /** Each line the child writes to stderr. */
    private readonly onStderrLine: (line: string) => void,
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * The child's stderr (read here, line by line, into the log). Also how the SDK client knows this is a
   * stdio transport: a server/discover probe that times out then means a legacy server, not an outage.
   */
  get stderr(): Readable | null {
    return this.child?.stderr ?? null;
  }

  start(): Promise<void> {
    if (this.child) return Promise.reject(new Error('stdio transport already started'));
    const { command, args, env, cwd } = this.server;
    // The SDK's safe default environment (PATH, HOME, …) plus the configured env; toolgate's own secrets stay out.
    const child = spawn(command, [...args], { env: { ...getDefaultEnvironment(), ...env }, stdio: ['pipe', 'pipe', 'pipe'], shell: false, windowsHide: true, ...(cwd ? { cwd } : {}) });
    this.child = child;
    child.on('close', () => {
      if (this.child === child) this.child = undefined;
      this.onclose?.();
    });
    child.stdin?.on('error', (error) => this.onerror?.(error));
    child.stdout?.on('error', (error) => this.onerror?.(error));
    child.stdout?.on('data', (chunk: Buffer) => this.received(chunk));
    if (child.stderr) createInterface({ input: child.stderr }).on('line', this.onStderrLine);
    return new Promise((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.on('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed) return Promise.reject(new Error('Not connected'));
    if (!this.corked) {
      this.corked = true;
      stdin.cork();
      setImmediate(() => {
        this.corked = false;
        stdin.uncork();
      });
    }
    // A write the pipe took is done for the caller: one settled promise serves them all.
    if (stdin.write(serializeMessage(message))) return WRITTEN;
    return new Promise((resolve) => stdin.once('drain', resolve));
  }

  async close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child) {
      try {
        child.stdin?.end();
      } catch {
        // Already gone: the exit checks below still hold.
      }
      if (!(await graceful(child))) {
        child.kill('SIGTERM');
        if (!(await graceful(child))) child.kill('SIGKILL');
      }
    }
    this.reads.clear();
  }

  private received(chunk: Buffer): void {
    try {
      this.reads.append(chunk);
    } catch (error) {
      // The child overflowed the read buffer: nothing after this can be trusted.
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      void this.close().catch(() => {});
      return;
    }
    // Bounded by the bytes just appended: each message consumes its line. What arrives is JSON, not yet a
    // checked message: the client's Protocol classifies each one with the SDK's schema guards before any use.
    for (let line = this.reads.next(); line !== undefined; line = this.reads.next()) this.onmessage?.(line.value as JSONRPCMessage);
  }
}
