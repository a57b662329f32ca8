import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { ERROR_TYPES, type Tool, type ToolResult } from '../types.js';
import { cellCounter } from './counter-cells.js';
import { PlainHistogram } from './plain-histogram.js';
import { stdoutLinesDropped } from './stdout.js';

/** Label for tools whose names are caller-chosen or per-user: metrics never carry those names. */
export const UNKNOWN_TOOL_LABEL = '__unknown__';
export const USER_TOOL_LABEL = '__user__';

/**
 * Call-duration buckets (`metrics.durationBuckets` overrides them): from 100 µs, so in-process tools that
 * answer in a fraction of a millisecond spread over several buckets, to 60 s for slow upstreams.
 */
export const DEFAULT_DURATION_BUCKETS: readonly number[] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Why admission refused a request: the replica's bound, the tenant's call bound, or the public routes' pool. */
export type OverloadScope = 'server' | 'tenant' | 'public';

export interface GatewayMetrics {
  readonly registry: Registry;
  readonly toolCalls: Counter<'tool' | 'source' | 'outcome'>;
  readonly toolDuration: PlainHistogram<'tool' | 'source'>;
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  /** Reports the in-flight request count (read when metrics are scraped, not updated per request). */
  watchInFlight(source: () => number): void;
  readonly toolShadowed: Counter<'winner' | 'loser'>;
  /** Counts a reload and remembers whether the last one succeeded (`toolgate_config_last_reload_successful`). */
  reloaded(ok: boolean): void;
  /** Reports readiness as /readyz answers it (read when metrics are scraped). */
  watchReady(source: () => boolean): void;
  countOverload(scope: OverloadScope): void;
  /** Reports the MCP notification streams open on this replica (read when metrics are scraped). */
  watchMcpStreams(source: () => number): void;
  /** Counts an MCP session `initialize` started (per tenant: tenants come from the config, so the label is bounded). */
  countMcpSession(tenant: string): void;
  /** `cancelled`: the call failed after its own caller gave up on it (counted as outcome `cancelled`). */
  recordCall(tenant: string, tool: Tool | undefined, result: ToolResult, cancelled?: boolean): void;
  countHttp(method: string, route: string, status: string): void;
  /**
   * Starts the per-tenant series of these tenants at 0 (every call outcome, MCP sessions), so a dashboard
   * shows 0 for a configured tenant rather than no data; called with the live config's tenants.
   */
  knownTenants(tenants: Iterable<string>): void;
  /** Starts the `ok` calls of these (catalog) tools at 0, under their metric labels. */
  knownTools(tools: Iterable<Tool>): void;
}

const OUTCOMES = new Set<string>(['ok', 'cancelled', 'error', 'pending_approval', ...ERROR_TYPES]);

/** A call's `outcome` label: ok, pending_approval, cancelled, or its errorType (`error` for anything unknown). */
export function outcomeLabel(result: ToolResult, cancelled = false): string {
  const answered = result.status ?? (result.ok ? 'ok' : cancelled ? 'cancelled' : result.error?.errorType ?? 'error');
  return OUTCOMES.has(answered) ? answered : 'error';
}

export function toolLabel(tool: Tool | undefined): string {
  if (!tool) return UNKNOWN_TOOL_LABEL;
  return tool.source === 'user-mcp' ? USER_TOOL_LABEL : tool.name;
}

/** One registry per gateway instance, so tests can build many apps in one process. */
export function createMetrics(options: { defaultMetrics?: boolean; durationBuckets?: readonly number[] } = {}): GatewayMetrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  // Counted in plain-number cells (see cellCounter and PlainHistogram): several of these run per request.
  const { counter: toolCalls, cell: callCell } = cellCounter({
    name: 'toolgate_tool_calls_total',
    help: 'Tool calls by tool, source and outcome (ok or errorType)',
    labelNames: ['tool', 'source', 'outcome'] as const,
    registers: [registry],
  });
  const toolDuration = new PlainHistogram(
    'toolgate_tool_call_duration_seconds',
    'Tool call duration',
    ['tool', 'source'] as const,
    options.durationBuckets ?? DEFAULT_DURATION_BUCKETS,
    registry,
  );
  const { counter: httpRequests, cell: httpCell } = cellCounter({
    name: 'toolgate_http_requests_total',
    help: 'HTTP requests by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  let inFlightSource = (): number => 0;
  new Gauge({
    name: 'toolgate_http_requests_in_flight',
    help: 'HTTP requests being served',
    registers: [registry],
    collect() {
      this.set(inFlightSource());
    },
  });
  let droppedSeen = 0;
  new Counter({
    name: 'toolgate_log_lines_dropped_total',
    help: 'Log and stdout audit lines lost on stdout: the reader fell too far behind, or a write failed',
    registers: [registry],
    collect() {
      const dropped = stdoutLinesDropped();
      if (dropped > droppedSeen) this.inc(dropped - droppedSeen);
      droppedSeen = dropped;
    },
  });
  const toolShadowed = new Counter({
    name: 'toolgate_tool_shadowed_total',
    help: 'Tools dropped from a pool because a higher-precedence source offers the same name',
    labelNames: ['winner', 'loser'] as const,
    registers: [registry],
  });
  const configReloads = new Counter({
    name: 'toolgate_config_reloads_total',
    help: 'Configuration reloads by result',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  for (const result of ['ok', 'error']) configReloads.inc({ result }, 0);
  const lastReload = new Gauge({
    name: 'toolgate_config_last_reload_successful',
    help: 'Whether the last configuration reload succeeded (1) or failed (0); 1 before any reload',
    registers: [registry],
  });
  lastReload.set(1);
  let readySource = (): boolean => true;
  new Gauge({
    name: 'toolgate_ready',
    help: 'Whether /readyz answers ready (1): 0 while a required upstream is down or the replica drains',
    registers: [registry],
    collect() {
      this.set(readySource() ? 1 : 0);
    },
  });
  let mcpStreamsSource = (): number => 0;
  new Gauge({
    name: 'toolgate_mcp_streams_open',
    help: 'MCP session notification streams (GET /mcp) open on this replica',
    registers: [registry],
    collect() {
      this.set(mcpStreamsSource());
    },
  });
  const mcpSessions = new Counter({
    name: 'toolgate_mcp_sessions_started_total',
    help: 'MCP sessions started by initialize, per tenant',
    labelNames: ['tenant'] as const,
    registers: [registry],
  });
  const overloads = new Counter({
    name: 'toolgate_overload_refusals_total',
    help: 'Requests refused with 503 because a bound was reached (scope: server, tenant or public)',
    labelNames: ['scope'] as const,
    registers: [registry],
  });
  for (const scope of ['server', 'tenant', 'public'] satisfies OverloadScope[]) overloads.inc({ scope }, 0);
  // Per tenant without the tool: tenant × tool × source × outcome would multiply the series.
  const { cell: tenantCell } = cellCounter({
    name: 'toolgate_tenant_calls_total',
    help: 'Tool calls by tenant and outcome (ok or errorType)',
    labelNames: ['tenant', 'outcome'] as const,
    registers: [registry],
  });
  return {
    registry,
    countHttp: (method, route, status) => httpCell(method, route, status).inc(),
    toolCalls,
    toolDuration,
    httpRequests,
    watchInFlight: (source) => {
      inFlightSource = source;
    },
    toolShadowed,
    reloaded(ok) {
      configReloads.inc({ result: ok ? 'ok' : 'error' });
      lastReload.set(ok ? 1 : 0);
    },
    watchReady: (source) => {
      readySource = source;
    },
    countOverload: (scope) => overloads.inc({ scope }),
    watchMcpStreams: (source) => {
      mcpStreamsSource = source;
    },
    countMcpSession: (tenant) => mcpSessions.inc({ tenant }),
    recordCall(tenant, tool, result, cancelled = false) {
      const label = toolLabel(tool);
      // The resolved tool's source, not the result's: a custom policy's answer cannot mint a label value.
      const source = tool?.source ?? 'none';
      // A client that hung up is not an upstream timeout: dashboards and alerts on TIMEOUT must not see it.
      const outcome = outcomeLabel(result, cancelled);
      callCell(label, source, outcome).inc();
      tenantCell(tenant, outcome).inc();
      toolDuration.labels(label, source).observe(result.durationMs / 1000);
    },
    knownTools(tools) {
      for (const tool of tools) callCell(toolLabel(tool), tool.source, 'ok');
    },
    knownTenants(tenants) {
      for (const tenant of tenants) {
        for (const outcome of OUTCOMES) tenantCell(tenant, outcome);
        mcpSessions.inc({ tenant }, 0);
      }
    },
  };
}
