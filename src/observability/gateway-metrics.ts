import { Registry, collectDefaultMetrics, type Counter, type Histogram } from 'prom-client';
import { ERROR_TYPES, type Tool, type ToolResult } from '../call/types.js';
import { batchedHistogram, cellCounter, counter, gauge, labelChildren, METRICS, type CounterCell, type HistogramCell } from './metric-table.js';
import { stdoutLinesDropped } from './stdout.js';
import { tenantLabels, tenantsAtZero } from './tenant-label.js';

/** Label for tools whose names are caller-chosen or per-user: metrics never carry those names. */
export const UNKNOWN_TOOL_LABEL = '__unknown__';
export const USER_TOOL_LABEL = '__user__';

/** Why admission refused a request: the replica's bound, the tenant's call bound, or the public routes' pool. */
export type OverloadScope = 'server' | 'tenant' | 'public' | 'pressure';

export interface GatewayMetrics {
  readonly registry: Registry;
  readonly toolCalls: Counter<'tool' | 'source' | 'outcome'>;
  readonly toolDuration: Histogram<'tool' | 'source'>;
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
   * shows 0 for a configured tenant rather than no data; called with the live config's tenants. Only when
   * they all fit under the label bound (`tenantsAtZero`): past it, a tenant's series start with its first event.
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
export function createMetrics(options: { defaultMetrics?: boolean; durationBuckets?: readonly number[]; maxTenantSeries?: number } = {}): GatewayMetrics {
  const registry = new Registry();
  const tenantLabel = tenantLabels(registry, options.maxTenantSeries);
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  // Counted several times per request: in plain numbers between reads (cellCounter).
  const { counter: toolCalls, cell: callChild } = cellCounter(registry, METRICS.toolCalls);
  // Observed once per call: in a buffer per label set, handed to prom-client in batches and on every read (batchedHistogram).
  const { histogram: toolDuration, cell: durationChild } = batchedHistogram(registry, METRICS.toolDuration, options.durationBuckets);
  const { counter: httpRequests, cell: httpChild } = cellCounter(registry, METRICS.httpRequests);
  const { cell: tenantChild } = cellCounter(registry, METRICS.tenantCalls);
  // A tool's cells in one lookup on every call (its duration and its `ok` count), not one per metric; its
  // `ok` cell made at its first ok call, so a tool that never succeeded shows no `ok` series.
  const toolCells = labelChildren((tool, source): { duration: HistogramCell; ok: CounterCell | undefined } => ({ duration: durationChild(tool, source), ok: undefined }));
  let inFlightSource = (): number => 0;
  gauge(registry, METRICS.httpInFlight, {
    collect() {
      this.set(inFlightSource());
    },
  });
  let droppedSeen = 0;
  counter(registry, METRICS.logLinesDropped, {
    collect() {
      const dropped = stdoutLinesDropped();
      if (dropped > droppedSeen) this.inc(dropped - droppedSeen);
      droppedSeen = dropped;
    },
  });
  const toolShadowed = counter(registry, METRICS.toolShadowed);
  const configReloads = counter(registry, METRICS.configReloads);
  for (const result of ['ok', 'error']) configReloads.inc({ result }, 0);
  const lastReload = gauge(registry, METRICS.lastReload);
  lastReload.set(1);
  let readySource = (): boolean => true;
  gauge(registry, METRICS.ready, {
    collect() {
      this.set(readySource() ? 1 : 0);
    },
  });
  let mcpStreamsSource = (): number => 0;
  gauge(registry, METRICS.mcpStreams, {
    collect() {
      this.set(mcpStreamsSource());
    },
  });
  const mcpSessions = counter(registry, METRICS.mcpSessions);
  const overloads = counter(registry, METRICS.overloads);
  for (const scope of ['server', 'tenant', 'public'] satisfies OverloadScope[]) overloads.inc({ scope }, 0);
  return {
    registry,
    countHttp: (method, route, status) => httpChild(method, route, status).inc(),
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
    countMcpSession: (tenant) => mcpSessions.inc({ tenant: tenantLabel(tenant) }),
    recordCall(tenant, tool, result, cancelled = false) {
      const label = toolLabel(tool);
      // The resolved tool's source, not the result's: a custom policy's answer cannot mint a label value.
      const source = tool?.source ?? 'none';
      // A client that hung up is not an upstream timeout: dashboards and alerts on TIMEOUT must not see it.
      const outcome = outcomeLabel(result, cancelled);
      const cells = toolCells(label, source);
      (outcome === 'ok' ? (cells.ok ??= callChild(label, source, outcome)) : callChild(label, source, outcome)).inc();
      tenantChild(tenantLabel(tenant), outcome).inc();
      // prom-client refuses a non-finite observation; such a call is counted but not timed.
      if (Number.isFinite(result.durationMs)) cells.duration.observe(result.durationMs / 1000);
    },
    knownTools(tools) {
      // A looked-up cell shows at 0 until counted.
      for (const tool of tools) callChild(toolLabel(tool), tool.source, 'ok');
    },
    knownTenants(tenants) {
      // Past the bound most tenants share one label: each label is started once.
      const labels = new Set<string>();
      for (const tenant of tenantsAtZero(registry, tenants)) labels.add(tenantLabel(tenant));
      for (const label of labels) {
        for (const outcome of OUTCOMES) tenantChild(label, outcome);
        mcpSessions.inc({ tenant: label }, 0);
      }
    },
  };
}
