// One managed connection to one configured MCP server (global or local): connect, list, follow
// list_changed, detect loss, reconnect with jittered backoff, and call tools without ever hanging on a
// dead upstream. The session itself (transport, listing, calls, error mapping) is upstream-session.ts.
import type { FetchLike } from '@modelcontextprotocol/client';
import type { CallToolResult, Client, Tool as McpTool } from '@modelcontextprotocol/client';
import { ToolError } from '../../call/tool-error.js';
import type { UpstreamStatus } from '../../registry/tool-provider.js';
import type { JsonObject, Logger } from '../../call/types.js';
import { backoffDelay, type BackoffOptions } from '../../shared/backoff.js';
import { callUpstreamTool, describeError, listAllTools, openSession, type CallOptions, type CallTarget, type UpstreamSession } from './upstream-session.js';
import { isHttpTransport, type UpstreamTransportConfig } from './upstream-transport.js';
import type { UpstreamEra } from './upstream-era.js';

export type { CallOptions } from './upstream-session.js';

export interface UpstreamClientOptions {
  service: string;
  /** Shown in status (`local-mcp`, `global-mcp`). */
  kind: string;
  config: UpstreamTransportConfig;
  log: Logger;
  required?: boolean;
  backoff?: Partial<BackoffOptions>;
  /** Bounds connect + first listing so start-up never hangs on a silent upstream. */
  connectTimeoutMs?: number;
  /** The SDK's own per-request cap; the timeout policy normally aborts earlier through the signal. */
  requestTimeoutMs?: number;
  /** The fetch under HTTP transports (one that adds the service's own OAuth credential). */
  fetch?: FetchLike;
}

export interface UpstreamClient {
  readonly service: string;
  start(): Promise<void>;
  tools(): readonly McpTool[];
  callTool(name: string, args: JsonObject, options?: CallOptions): Promise<CallToolResult>;
  /** The live session's SDK client while ready (resources and prompts), else undefined. */
  sdkClient(): Client | undefined;
  /** Fires after every successful (re)listing and on every state change. */
  onChange(listener: () => void): void;
  status(): UpstreamStatus;
  close(): Promise<void>;
}

type State = UpstreamStatus['state'];

const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 200, maxMs: 30_000, factor: 2 };
/** Pages of one listing; far more than any real server sends, but a bound. */
const MAX_LIST_PAGES = 1000;

/** The next reconnect: at most one timer, delays growing with each failed attempt until a success resets them. */
class ReconnectTimer {
  attempts = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly backoff: BackoffOptions,
    private readonly log: Logger,
  ) {}

  get pending(): boolean {
    return this.timer !== undefined;
  }

  schedule(run: () => void): void {
    if (this.timer) return;
    const delay = backoffDelay(this.attempts, this.backoff);
    this.attempts += 1;
    this.log.debug({ delayMs: delay, attempt: this.attempts }, 'upstream reconnect scheduled');
    this.timer = setTimeout(() => {
      this.timer = undefined;
      run();
    }, delay);
    this.timer.unref();
  }

  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** list_changed handling: one listing at a time; a change during a listing triggers one more. */
class Relister {
  private running: Promise<void> | undefined;
  private again = false;

  constructor(private readonly listOnce: () => Promise<void>) {}

  request(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.loop().finally(() => {
      this.running = undefined;
    });
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      await this.listOnce();
    } while (this.again);
  }
}

/** The live session and the generation it belongs to: an event from an older session is ignored. */
interface Current {
  session: UpstreamSession;
  generation: number;
  relister: Relister;
  /** What every call on this session is made against: built once per connect, not per call. */
  target: CallTarget;
}

class ManagedUpstream implements UpstreamClient {
  readonly service: string;
  private readonly log: Logger;
  private readonly listeners: Array<() => void> = [];
  private readonly reconnects: ReconnectTimer;
  private readonly connectTimeoutMs: number;
  private state: State = 'connecting';
  private lastError: string | undefined;
  private listed: readonly McpTool[] = [];
  private current: Current | undefined;
  private generation = 0;
  private connecting: Promise<void> | undefined;
  private connectedAt: string | undefined;
  /** Set once streamable HTTP was refused: later reconnects go straight to SSE. */
  private fellBackToSse = false;
  /** The era the upstream spoke at its last connect (kept while it is down: what it will most likely speak again). */
  private era: UpstreamEra | undefined;
  /** A stdio child that exited on the probe: its reconnects skip the probe (one spawn each, not two). */
  private knownLegacy = false;

  constructor(private readonly options: UpstreamClientOptions) {
    this.service = options.service;
    this.log = options.log.child({ upstream: options.service });
    this.reconnects = new ReconnectTimer({ ...DEFAULT_BACKOFF, ...options.backoff }, this.log);
    this.connectTimeoutMs = options.connectTimeoutMs ?? 15_000;
  }

  async start(): Promise<void> {
    await this.connect();
  }

  // The last known listing, also while down: a model's tools do not vanish mid-conversation (and the
  // listing ETag stays put); calls meanwhile fail fast with UPSTREAM_ERROR until the upstream is back.
  tools(): readonly McpTool[] {
    return this.listed;
  }

  async callTool(name: string, args: JsonObject, callOptions: CallOptions = {}): Promise<CallToolResult> {
    const current = this.current;
    if (this.state !== 'ready' || !current) {
      throw new ToolError('UPSTREAM_ERROR', `upstream ${this.service} is ${this.state}${this.lastError ? `: ${this.lastError}` : ''}`);
    }
    return callUpstreamTool(current.target, name, args, callOptions);
  }

  sdkClient(): Client | undefined {
    return this.state === 'ready' ? this.current?.session.client : undefined;
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  status(): UpstreamStatus {
    const ready = this.state === 'ready';
    const pid = this.current?.session.pid;
    return {
      service: this.service,
      kind: this.options.kind,
      state: this.state,
      required: this.options.required ?? false,
      toolCount: ready ? this.listed.length : 0,
      ...(this.lastError ? { lastError: this.lastError } : {}),
      detail: {
        transport: this.fellBackToSse ? 'sse' : this.options.config.transport,
        ...(this.era ? { era: this.era } : {}),
        ...(pid !== undefined ? { pid } : {}),
        ...(this.connectedAt ? { connectedAt: this.connectedAt } : {}),
        ...(this.state === 'down' ? { reconnectAttempts: this.reconnects.attempts } : {}),
      },
    };
  }

  async close(): Promise<void> {
    this.state = 'closed';
    this.reconnects.cancel();
    await this.connecting?.catch(() => {});
    await this.teardown();
    this.emit();
  }

  // A method, not an inline comparison: `state` changes across awaits, which TS narrowing cannot see.
  private isClosed(): boolean {
    return this.state === 'closed';
  }

  private emit(): void {
    for (const listener of this.listeners) {
      try {
        listener();
      } catch (error) {
        this.log.error({ err: error }, 'upstream change listener failed');
      }
    }
  }

  private setState(next: State, error?: unknown): void {
    if (error !== undefined) this.lastError = describeError(error);
    if (this.state === next) return;
    this.state = next;
    this.emit();
  }

  private async teardown(): Promise<void> {
    const old = this.current;
    this.current = undefined;
    this.generation += 1;
    await old?.session.close();
  }

  private scheduleReconnect(): void {
    if (this.isClosed() || this.connecting) return;
    this.reconnects.schedule(() => void this.connect());
  }

  /** The upstream is gone (child exit, transport closed, network failure): fail fast and come back later. */
  private lost(error: unknown, from: number): void {
    if (this.isClosed() || from !== this.generation) return;
    // One line per event with the reason only: a stack says nothing about an upstream that went away.
    this.log.warn({ error: describeError(error) }, 'upstream connection lost');
    this.setState('down', error);
    void this.teardown().then(() => this.scheduleReconnect());
  }

  private async relist(current: Current): Promise<void> {
    try {
      const listed = await listAllTools(current.session, { timeoutMs: this.connectTimeoutMs, maxPages: MAX_LIST_PAGES });
      if (this.current !== current) return;
      this.listed = listed;
      this.log.info({ tools: listed.length }, 'upstream tools re-listed');
      this.emit();
    } catch (error) {
      this.log.warn({ err: error }, 'upstream re-listing failed');
    }
  }

  private async connectOnce(): Promise<void> {
    const generation = ++this.generation;
    const { config } = this.options;
    let current: Current | undefined;
    const session = await openSession(config, {
      label: this.service,
      log: this.log,
      timeoutMs: this.connectTimeoutMs,
      ...(this.fellBackToSse ? { mode: 'sse' as const } : {}),
      ...(this.knownLegacy ? { era: 'legacy' as const } : {}),
      ...(this.options.fetch ? { fetch: this.options.fetch } : {}),
      onClose: () => this.lost(new Error('upstream transport closed'), generation),
      onError: (error) => {
        this.log.debug({ err: error }, 'upstream transport error');
        // HTTP transports report a dead server only as errors; a failed ping tells a blip from a loss.
        if (isHttpTransport(config) && this.state === 'ready' && current && this.current === current) {
          current.session.client.ping({ timeout: 2_000 }).catch((pingError: unknown) => this.lost(pingError, generation));
        }
      },
      onToolsChanged: () => current?.relister.request(),
    });
    if (generation !== this.generation) {
      await session.close();
      throw new Error('upstream connection replaced during start-up');
    }
    const target: CallTarget = {
      session,
      service: this.service,
      onLost: (error: unknown) => this.lost(error, generation),
      ...(this.options.requestTimeoutMs !== undefined ? { timeoutMs: this.options.requestTimeoutMs } : {}),
    };
    const created: Current = { session, generation, relister: new Relister(() => this.relist(created)), target };
    current = created;
    this.current = created;
    if (session.kind === 'sse' && config.transport === 'streamable-http') this.fellBackToSse = true;
    // Each connect probes again (an upstream may have been upgraded or rolled back since), except a stdio
    // child known to exit on the probe.
    this.era = session.era;
    if (session.unprobed) this.knownLegacy = true;
    const listed = await listAllTools(session, { timeoutMs: this.connectTimeoutMs, maxPages: MAX_LIST_PAGES });
    if (this.current !== created) throw new Error('upstream connection replaced during start-up');
    this.listed = listed;
  }

  private connect(): Promise<void> {
    if (this.connecting) return this.connecting;
    if (this.isClosed()) return Promise.resolve();
    this.connecting = this.connectAndReport().finally(() => {
      this.connecting = undefined;
      if (this.state === 'down') this.scheduleReconnect();
    });
    return this.connecting;
  }

  private async connectAndReport(): Promise<void> {
    this.setState('connecting');
    try {
      await this.connectOnce();
      if (this.isClosed()) {
        await this.teardown();
        return;
      }
      this.reconnects.attempts = 0;
      this.lastError = undefined;
      this.connectedAt = new Date().toISOString();
      this.log.info({ tools: this.listed.length }, 'upstream connected');
      this.state = 'ready';
      this.emit();
    } catch (error) {
      if (this.isClosed()) return;
      this.log.warn({ error: describeError(error), attempt: this.reconnects.attempts }, 'upstream connect failed');
      await this.teardown();
      this.setState('down', error);
    }
  }
}

export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  return new ManagedUpstream(options);
}
