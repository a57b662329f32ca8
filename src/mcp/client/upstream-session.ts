// One connected SDK client to one MCP server, for every kind of upstream (global, local, a user's own):
// open (with the SSE fallback), list every page, call a tool, and map what went wrong to TG_* errors.
// Reconnecting and caching are the owner's business (upstream-client.ts for config upstreams,
// src/mcp/user for user servers).
import { handleUpstreamRequests, RELAY_CAPABILITIES, type InFlightCalls } from './relay.js';
import { Client, ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode, SdkHttpError, type CallToolResult, type FetchLike, type Progress, type Tool as McpTool } from '@modelcontextprotocol/client';
import { ToolError } from '../../call/tool-error.js';
import { ATTR_GEN_AI_OPERATION_NAME, ATTR_GEN_AI_TOOL_NAME, ATTR_MCP_METHOD_NAME, ATTR_NETWORK_TRANSPORT, ATTR_UPSTREAM, clientSpan, isTracing } from '../../observability/tracing.js';
import type { JsonObject, Logger, ProgressUpdate } from '../../call/types.js';
import { callHeadersMeta, DEPTH_HEADER } from './upstream-fetch.js';
import { openTransport, type OpenedTransport, type UpstreamTransportConfig } from './upstream-transport.js';
import { collectPages } from '../../shared/pages.js';
import { createOutputValidator } from './output-validator.js';
import { callResultSchema, callsDirectly } from './direct-call.js';
import { eraOf, MAX_INPUT_ROUNDS, negotiationFor, type UpstreamEra } from './upstream-era.js';

export interface SessionHandlers {
  /** The transport closed (child exit, stream ended, close()). */
  onClose?: () => void;
  onError?: (error: Error) => void;
  /** The server sent notifications/tools/list_changed. */
  onToolsChanged?: () => void;
}

export interface OpenSessionOptions extends SessionHandlers {
  /** Names the upstream in the timeout message (the service id, or a user's service key). */
  label: string;
  log: Logger;
  /** Bounds transport start and the initialize handshake. */
  timeoutMs: number;
  /** Streamable HTTP was refused before: go straight to SSE. */
  mode?: 'sse';
  /**
   * The era this upstream spoke when it last connected: `legacy` skips the `server/discover` probe where
   * the probe itself is known to fail (a stdio child that exits on it); absent, the probe decides.
   */
  era?: UpstreamEra;
  /** The fetch under HTTP transports (the pinned egress fetch for user servers). */
  fetch?: FetchLike;
  clientName?: string;
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
  /** Asks the upstream for progress (the SDK adds a `progressToken` of its own) and hands each report here. */
  onProgress?: ((update: ProgressUpdate) => void) | undefined;
}

export interface UpstreamSession {
  readonly client: Client;
  /** The wire in use: `sse` also when streamable HTTP fell back to it. */
  readonly kind: OpenedTransport['kind'];
  readonly pid: number | undefined;
  /** The protocol era the connect negotiated: `modern` (2026-07-28, `server/discover`) or `legacy` (`initialize`). */
  readonly era: UpstreamEra;
  /** Connected without a probe because the upstream is known to be legacy (`OpenSessionOptions.era`). */
  readonly unprobed: boolean;
  /** The calls running on this connection, for tying a stdio upstream's questions to the one call that can ask. */
  readonly calls: InFlightCalls;
  /**
   * Each tool of the last listing by upstream name: a call's result is checked against its `outputSchema`.
   * (The SDK's client keeps such an index only from listings it pages itself; ours are bounded and paged here.)
   */
  readonly listed: Map<string, McpTool>;
  /** The tools of the last listing whose calls skip `Client.callTool()` (direct-call.ts). */
  readonly direct: Set<string>;
  close(): Promise<void>;
}

export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** An HTTP 4xx on the first POST means an older server without streamable HTTP: try SSE. */
function wantsSseFallback(error: unknown): boolean {
  return error instanceof SdkHttpError && error.status >= 400 && error.status < 500 && error.status !== 401 && error.status !== 403;
}

/**
 * The probe of an upstream that is not a stdio child of the SDK's own transport runs in place; a stdio
 * child that exits on an unknown request before `initialize` (servers built on SDKs that do) fails it.
 * Such a server is legacy: the connect is retried with the probe skipped.
 */
function probeFailedInPlace(error: unknown): boolean {
  return error instanceof SdkError && error.code === SdkErrorCode.EraNegotiationFailed;
}

/**
 * Pages the SDK's own walk of a listing may read (the catalog's bound on a listing, src/mcp/server); past it
 * the SDK fails the listing (ListPaginationExceeded) rather than read on.
 */
const SDK_LIST_MAX_PAGES = 20;

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function connectOver(config: UpstreamTransportConfig, options: OpenSessionOptions): Promise<UpstreamSession> {
  const opened = await openTransport(config, options.log, { ...(options.mode ? { mode: options.mode } : {}), ...(options.fetch ? { fetch: options.fetch } : {}) });
  const onToolsChanged = options.onToolsChanged;
  const client = new Client(
    { name: options.clientName ?? 'toolgate', version: '0.1.0' },
    {
      capabilities: structuredClone(RELAY_CAPABILITIES),
      jsonSchemaValidator: createOutputValidator(),
      versionNegotiation: negotiationFor(opened.kind, options.era, options.timeoutMs),
      // A modern upstream's questions come as `input_required`: the SDK answers them through the same
      // elicitation/sampling handlers (relay.ts) and retries the call, at most as often as the relay allows.
      inputRequired: { autoFulfill: true, maxRounds: MAX_INPUT_ROUNDS },
      // Tools are paged by listAllTools under its own bound; resources and prompts (toolgate's /mcp catalog)
      // ask for a first page without a cursor, which the SDK walks to the end itself: bounded here.
      listMaxPages: SDK_LIST_MAX_PAGES,
      // On a modern connection list changes arrive only through `subscriptions/listen`, which the SDK opens
      // for this; the listing itself stays ours (one relister per upstream), so no auto-refresh.
      ...(onToolsChanged ? { listChanged: { tools: { autoRefresh: false, debounceMs: 0, onChanged: () => onToolsChanged() } } } : {}),
    },
  );
  const calls = handleUpstreamRequests(client, options.label, opened.kind);
  const session: UpstreamSession = {
    client,
    kind: opened.kind,
    calls,
    listed: new Map(),
    direct: new Set(),
    unprobed: options.era === 'legacy',
    get pid() {
      return opened.pid;
    },
    get era() {
      return eraOf(client);
    },
    async close() {
      client.onclose = undefined;
      client.onerror = undefined;
      await client.close().catch(() => {});
      await opened.dispose?.().catch(() => {});
    },
  };
  try {
    await withTimeout(client.connect(opened.transport, { timeout: options.timeoutMs }), options.timeoutMs, `connect to ${options.label} timed out`);
  } catch (error) {
    await session.close();
    throw error;
  }
  // Only now: a failed connect closes its transport, and that close is the rejection above, not a lost session.
  if (options.onClose) client.onclose = options.onClose;
  if (options.onError) client.onerror = options.onError;
  return session;
}

/** Connects to one upstream; a streamable-HTTP server that refuses the first POST with a 4xx is retried over SSE. */
export async function openSession(config: UpstreamTransportConfig, options: OpenSessionOptions): Promise<UpstreamSession> {
  try {
    return await connectOver(config, options);
  } catch (error) {
    if (config.transport === 'stdio' && options.era === undefined && probeFailedInPlace(error)) {
      options.log.info({ err: error }, 'server/discover probe failed on stdio; connecting as a legacy server');
      return connectOver(config, { ...options, era: 'legacy' });
    }
    if (config.transport !== 'streamable-http' || options.mode === 'sse' || !wantsSseFallback(error)) throw error;
    options.log.info({ err: error }, 'streamable HTTP refused; falling back to SSE');
    return connectOver(config, { ...options, mode: 'sse' });
  }
}

/** Every page of the listing; bounded, so a server that pages forever cannot hold it hostage. */
export async function listAllTools(session: UpstreamSession, options: { timeoutMs: number; maxPages: number; maxItems?: number }): Promise<McpTool[]> {
  const tools = await collectPages(async (cursor) => {
    // Page by page under our bounds: the SDK's listTools() without a cursor would walk every page itself.
    const result = cursor === undefined ? await session.client.request({ method: 'tools/list', params: {} }, { timeout: options.timeoutMs }) : await session.client.listTools({ cursor }, { timeout: options.timeoutMs });
    return { items: result.tools, nextCursor: result.nextCursor };
  }, options);
  session.listed.clear();
  session.direct.clear();
  for (const tool of tools) {
    session.listed.set(tool.name, tool);
    if (callsDirectly(tool)) session.direct.add(tool.name);
  }
  return tools;
}

export interface CallTarget {
  session: UpstreamSession;
  /** Names the upstream in error messages (`service/tool`). */
  service: string;
  /** The SDK's own per-request cap; the timeout policy normally aborts earlier through the call's signal. */
  timeoutMs?: number;
  /** The transport failed under the call: the owner drops or reconnects the session. */
  onLost: (error: unknown) => void;
}

/**
 * The one error mapping for upstream calls: the call's own cancellation wins (its ToolError reason, or
 * TIMEOUT); the SDK's request timeout is TIMEOUT; anything else is UPSTREAM_ERROR, and a failure of the
 * transport itself (connection closed, fetch failed, EPIPE, HTTP 5xx) also reports the upstream lost.
 */
function mapCallError(error: unknown, label: string, signal: AbortSignal | undefined, onLost: (error: unknown) => void): ToolError {
  if (error instanceof ToolError) return error;
  if (signal?.aborted) {
    const reason: unknown = signal.reason;
    return reason instanceof ToolError ? reason : new ToolError('TIMEOUT', `call to ${label} was cancelled`, { cause: error });
  }
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.RequestTimeout) return new ToolError('TIMEOUT', `${label}: ${error.message}`, { cause: error });
    if (error.code === SdkErrorCode.ConnectionClosed || error.code === SdkErrorCode.NotConnected || error.code === SdkErrorCode.SendFailed) onLost(error);
    return new ToolError('UPSTREAM_ERROR', `${label}: ${error.message}`, { cause: error });
  }
  if (error instanceof ProtocolError) {
    // The upstream refused this call's parameters: a definite answer to this caller, not a sign it is unwell.
    return new ToolError('UPSTREAM_ERROR', `${label}: ${error.message}`, { cause: error, permanent: error.code === ProtocolErrorCode.InvalidParams });
  }
  onLost(error);
  return new ToolError('UPSTREAM_ERROR', `${label}: upstream unreachable (${describeError(error)})`, { cause: error });
}

/** What the SDK's callTool() takes besides the params. */
type SdkCallOptions = NonNullable<Parameters<Client['callTool']>[1]>;

export function callUpstreamTool(target: CallTarget, name: string, args: JsonObject, options: CallOptions = {}): Promise<CallToolResult> {
  if (!isTracing()) return callOnce(target, name, args, options, undefined);
  const transport = target.session.kind === 'stdio' ? 'pipe' : target.session.kind === 'in-memory' ? 'inproc' : 'tcp';
  const attributes = { [ATTR_MCP_METHOD_NAME]: 'tools/call', [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool', [ATTR_GEN_AI_TOOL_NAME]: name, [ATTR_NETWORK_TRANSPORT]: transport, [ATTR_UPSTREAM]: target.service };
  return clientSpan(`tools/call ${name}`, attributes, (trace) => callOnce(target, name, args, options, trace), (result) => result.isError === true);
}

/**
 * One tools/call. `trace` (traceparent, tracestate) rides in `params._meta` on every transport, as the MCP
 * semantic conventions put it, so a traced MCP server continues the trace; over HTTP it is also a header.
 */
async function callOnce(target: CallTarget, name: string, args: JsonObject, options: CallOptions, trace: Readonly<Record<string, string>> | undefined): Promise<CallToolResult> {
  const { session } = target;
  const { signal } = options;
  const http = session.kind === 'streamable-http' || session.kind === 'sse';
  const params = http
    ? { name, arguments: args, _meta: { ...trace, ...callHeadersMeta({ ...options.headers, ...trace, [DEPTH_HEADER]: String((options.depth ?? 0) + 1) }) } }
    : trace === undefined
      ? { name, arguments: args }
      : { name, arguments: args, _meta: { ...trace } };
  const sdkOptions: SdkCallOptions = { signal, timeout: target.timeoutMs ?? 300_000 };
  const { onProgress } = options;
  // The upstream's token is the SDK's own, never the caller's: reports come back here and are relayed under the caller's token.
  if (onProgress) sdkOptions.onprogress = ({ progress: value, total, message }: Progress) => onProgress({ progress: value, ...(total === undefined ? {} : { total }), ...(message === undefined ? {} : { message }) });
  const entry = session.calls.enter();
  try {
    if (session.direct.has(name)) return await session.client.request({ method: 'tools/call', params }, callResultSchema(session.era), sdkOptions);
    // The listed definition for the SDK's output check (and, on a modern HTTP connection, its header mirroring);
    // without one the SDK would look the tool up in its own response cache, a promise more per call.
    const tool = session.listed.get(name);
    if (tool) sdkOptions.toolDefinition = tool;
    return await session.client.callTool(params, sdkOptions);
  } catch (error) {
    throw mapCallError(error, `${target.service}/${name}`, signal, target.onLost);
  } finally {
    session.calls.leave(entry);
  }
}
