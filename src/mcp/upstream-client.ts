// One managed connection to one MCP server: connect, list (paginated), follow list_changed,
// detect loss, reconnect with jittered backoff, and call tools without ever hanging on a dead upstream.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type CallToolResult, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { ToolError } from '../execution/tool-error.js';
import type { UpstreamStatus } from '../registry/provider.js';
import type { JsonObject, Logger } from '../types.js';
import { isHttpTransport, openTransport, type OpenedTransport, type UpstreamTransportConfig } from './upstream-transport.js';

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  factor: number;
}

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
}

export interface CallOptions {
  /**
   * The call's own cancellation (a ToolContext's signal), handed to the SDK as is. Never a signal shared by
   * many calls: the SDK leaves a listener on it per request.
   */
  signal?: AbortSignal;
  /** Depth of the incoming request; HTTP upstreams receive depth + 1. */
  depth?: number;
  /** Per-call headers for HTTP upstreams (forwarded identity); `authorization` is dropped. */
  headers?: Readonly<Record<string, string>>;
}

export interface UpstreamClient {
  readonly service: string;
  start(): Promise<void>;
  tools(): readonly McpTool[];
  callTool(name: string, args: JsonObject, options?: CallOptions): Promise<CallToolResult>;
  /** Fires after every successful (re)listing and on every state change. */
  onChange(listener: () => void): void;
  status(): UpstreamStatus;
  close(): Promise<void>;
}

type State = UpstreamStatus['state'];

const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 200, maxMs: 30_000, factor: 2 };

/** Full-jitter-ish: between half and all of the capped exponential delay, so restarts don't stampede. */
export function backoffDelay(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  const capped = Math.min(options.maxMs, options.initialMs * options.factor ** attempt);
  return Math.round(capped * (0.5 + random() * 0.5));
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** An HTTP 4xx on the first POST means an older server without streamable HTTP: try SSE. */
function wantsSseFallback(error: unknown): boolean {
  return error instanceof StreamableHTTPError && typeof error.code === 'number' && error.code >= 400 && error.code < 500;
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const { service, config } = options;
  const log = options.log.child({ upstream: service });
  const backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
  const connectTimeoutMs = options.connectTimeoutMs ?? 15_000;
  const requestTimeoutMs = options.requestTimeoutMs ?? 300_000;
  const listeners: Array<() => void> = [];

  let state: State = 'connecting';
  let lastError: string | undefined;
  let tools: readonly McpTool[] = [];
  let client: Client | undefined;
  let opened: OpenedTransport | undefined;
  let transportMode: 'sse' | undefined;
  let attempt = 0;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let connecting: Promise<void> | undefined;
  let generation = 0;
  let connectedAt: string | undefined;
  let relisting: Promise<void> | undefined;
  let relistAgain = false;

  // A function, not an inline comparison: `state` changes across awaits, which TS narrowing cannot see.
  const isClosed = (): boolean => state === 'closed';

  const emit = (): void => {
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        log.error({ err: error }, 'upstream change listener failed');
      }
    }
  };

  const setState = (next: State, error?: unknown): void => {
    if (error !== undefined) lastError = describe(error);
    if (state === next) return;
    state = next;
    emit();
  };

  async function listAll(current: Client): Promise<McpTool[]> {
    const all: McpTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await current.listTools(cursor ? { cursor } : undefined, { timeout: connectTimeoutMs });
      all.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return all;
  }

  /** list_changed handling: one listing at a time; a change during a listing triggers one more. */
  function relist(current: Client): void {
    if (relisting) {
      relistAgain = true;
      return;
    }
    relisting = (async () => {
      do {
        relistAgain = false;
        try {
          const listed = await listAll(current);
          if (client !== current) return;
          tools = listed;
          log.info({ tools: listed.length }, 'upstream tools re-listed');
          emit();
        } catch (error) {
          log.warn({ err: error }, 'upstream re-listing failed');
        }
      } while (relistAgain);
    })().finally(() => {
      relisting = undefined;
    });
  }

  async function teardown(): Promise<void> {
    const old = client;
    const oldOpened = opened;
    client = undefined;
    opened = undefined;
    generation += 1;
    if (old) {
      old.onclose = undefined;
      old.onerror = undefined;
      await old.close().catch(() => {});
    }
    await oldOpened?.dispose?.().catch(() => {});
  }

  function scheduleReconnect(): void {
    if (state === 'closed' || reconnectTimer || connecting) return;
    const delay = backoffDelay(attempt, backoff);
    attempt += 1;
    log.debug({ delayMs: delay, attempt }, 'upstream reconnect scheduled');
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      void connect();
    }, delay);
    reconnectTimer.unref();
  }

  /** The upstream is gone (child exit, transport closed, network failure): fail fast and come back later. */
  function lost(error: unknown, from: number): void {
    if (state === 'closed' || from !== generation) return;
    // One line per event with the reason only: a stack says nothing about an upstream that went away.
    log.warn({ error: describe(error) }, 'upstream connection lost');
    setState('down', error);
    void teardown().then(scheduleReconnect);
  }

  async function connectOnce(): Promise<void> {
    opened = await openTransport(config, log, transportMode);
    const current = new Client({ name: 'toolgate', version: '0.1.0' }, { capabilities: {} });
    const myGeneration = ++generation;
    client = current;
    current.onclose = () => lost(new Error('upstream transport closed'), myGeneration);
    current.onerror = (error) => {
      log.debug({ err: error }, 'upstream transport error');
      // HTTP transports report a dead server only as errors; a failed ping tells a blip from a loss.
      if (isHttpTransport(config) && state === 'ready' && client === current) {
        current.ping({ timeout: 2_000 }).catch((pingError: unknown) => lost(pingError, myGeneration));
      }
    };
    current.setNotificationHandler(ToolListChangedNotificationSchema, () => relist(current));
    await withTimeout(current.connect(opened.transport), connectTimeoutMs, `connect to ${service} timed out`);
    const listed = await listAll(current);
    if (client !== current) throw new Error('upstream connection replaced during start-up');
    tools = listed;
  }

  async function connect(): Promise<void> {
    if (connecting) return connecting;
    if (state === 'closed') return;
    connecting = (async () => {
      setState('connecting');
      try {
        try {
          await connectOnce();
        } catch (error) {
          if (config.transport !== 'streamable-http' || transportMode === 'sse' || !wantsSseFallback(error)) throw error;
          log.info({ err: error }, 'streamable HTTP refused; falling back to SSE');
          await teardown();
          transportMode = 'sse';
          await connectOnce();
        }
        if (isClosed()) {
          await teardown();
          return;
        }
        attempt = 0;
        lastError = undefined;
        connectedAt = new Date().toISOString();
        log.info({ tools: tools.length }, 'upstream connected');
        state = 'ready';
        emit();
      } catch (error) {
        if (isClosed()) return;
        log.warn({ error: describe(error), attempt }, 'upstream connect failed');
        await teardown();
        setState('down', error);
      }
    })().finally(() => {
      connecting = undefined;
      if (state === 'down') scheduleReconnect();
    });
    return connecting;
  }

  function mapCallError(error: unknown, name: string, signal: AbortSignal | undefined, from: number): ToolError {
    if (error instanceof ToolError) return error;
    if (signal?.aborted) {
      const reason: unknown = signal.reason;
      return reason instanceof ToolError ? reason : new ToolError('TIMEOUT', `call to ${service}/${name} was cancelled`, { cause: error });
    }
    if (error instanceof McpError) {
      if (error.code === ErrorCode.RequestTimeout) return new ToolError('TIMEOUT', `${service}/${name}: ${error.message}`, { cause: error });
      // ConnectionClosed means the transport died under the call.
      if (error.code === ErrorCode.ConnectionClosed) lost(error, from);
      return new ToolError('UPSTREAM_ERROR', `${service}/${name}: ${error.message}`, { cause: error });
    }
    // Anything else (fetch failed, EPIPE, HTTP 5xx) is the transport: treat the upstream as lost.
    lost(error, from);
    return new ToolError('UPSTREAM_ERROR', `${service}/${name}: upstream unreachable (${describe(error)})`, { cause: error });
  }

  return {
    service,
    async start() {
      await connect();
    },
    // The last known listing, also while down: a model's tools do not vanish mid-conversation (and the
    // listing ETag stays put); calls meanwhile fail fast with UPSTREAM_ERROR until the upstream is back.
    tools: () => tools,
    async callTool(name, args, callOptions = {}) {
      const current = client;
      const channel = opened?.channel;
      if (state !== 'ready' || !current) {
        throw new ToolError('UPSTREAM_ERROR', `upstream ${service} is ${state}${lastError ? `: ${lastError}` : ''}`);
      }
      const from = generation;
      const { signal } = callOptions;
      try {
        const send = () => current.callTool({ name, arguments: args }, undefined, { signal, timeout: requestTimeoutMs });
        if (!channel) return (await send()) as CallToolResult;
        const headers = { ...callOptions.headers, 'X-Toolgate-Depth': String((callOptions.depth ?? 0) + 1) };
        return (await channel.run(headers, send)) as CallToolResult;
      } catch (error) {
        throw mapCallError(error, name, signal, from);
      }
    },
    onChange(listener) {
      listeners.push(listener);
    },
    status() {
      return {
        service,
        kind: options.kind,
        state,
        required: options.required ?? false,
        toolCount: state === 'ready' ? tools.length : 0,
        ...(lastError ? { lastError } : {}),
        detail: {
          transport: transportMode ?? config.transport,
          ...(opened?.pid !== undefined ? { pid: opened.pid } : {}),
          ...(connectedAt ? { connectedAt } : {}),
          ...(state === 'down' ? { reconnectAttempts: attempt } : {}),
        },
      };
    },
    async close() {
      state = 'closed';
      if (reconnectTimer) clearTimeout(reconnectTimer);
      reconnectTimer = undefined;
      await connecting?.catch(() => {});
      await teardown();
      emit();
    },
  };
}
