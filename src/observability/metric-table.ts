// Every metric toolgate exports, in one table: name, type, help and labels. The modules that count use
// entries from here (`counter`, `gauge`, `histogram` below), so this file is the catalog an operator
// reads; docs/operations.md lists the same set (test/unit/observability/metric-table.test.ts checks both).
// Labels are bounded: tool and service names from the config (caller-chosen and per-user ones bucketed),
// tenants from the config, outcomes and decisions from fixed sets.
import { Counter, Gauge, Histogram, type CounterConfiguration, type GaugeConfiguration, type HistogramConfiguration, type LabelValues, type Registry } from 'prom-client';

export interface MetricSpec {
  readonly name: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly help: string;
  readonly labelNames: readonly string[];
  /** Histograms: default bucket bounds (seconds for durations). */
  readonly buckets?: readonly number[];
}

/**
 * Call-duration buckets (`metrics.durationBuckets` overrides them): from 100 µs, so in-process tools that
 * answer in a fraction of a millisecond spread over several buckets, to 60 s for slow upstreams.
 */
export const DEFAULT_DURATION_BUCKETS: readonly number[] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Seconds an approval request waited for its decision: from a few seconds to the longest sensible expiry (a day). */
const APPROVAL_WAIT_BUCKETS: readonly number[] = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 43200, 86400];

export const METRICS = {
  // Calls and requests (src/observability/gateway-metrics.ts)
  toolCalls: { name: 'toolgate_tool_calls_total', type: 'counter', help: 'Tool calls by tool, source and outcome (ok or errorType)', labelNames: ['tool', 'source', 'outcome'] },
  toolDuration: { name: 'toolgate_tool_call_duration_seconds', type: 'histogram', help: 'Tool call duration', labelNames: ['tool', 'source'], buckets: DEFAULT_DURATION_BUCKETS },
  // Per tenant without the tool: tenant × tool × source × outcome would multiply the series.
  tenantCalls: { name: 'toolgate_tenant_calls_total', type: 'counter', help: 'Tool calls by tenant and outcome (ok or errorType)', labelNames: ['tenant', 'outcome'] },
  httpRequests: { name: 'toolgate_http_requests_total', type: 'counter', help: 'HTTP requests by method, route pattern and status code', labelNames: ['method', 'route', 'status'] },
  httpInFlight: { name: 'toolgate_http_requests_in_flight', type: 'gauge', help: 'HTTP requests being served', labelNames: [] },
  overloads: { name: 'toolgate_overload_refusals_total', type: 'counter', help: 'Requests refused with 503 because a bound was reached (scope: server, tenant, public, or pressure: load shedding)', labelNames: ['scope'] },
  toolShadowed: { name: 'toolgate_tool_shadowed_total', type: 'counter', help: 'Tools dropped from a pool because a higher-precedence source offers the same name', labelNames: ['winner', 'loser'] },
  logLinesDropped: { name: 'toolgate_log_lines_dropped_total', type: 'counter', help: 'Log and stdout audit lines lost on stdout: the reader fell too far behind, or a write failed', labelNames: [] },
  // Configuration and readiness
  configReloads: { name: 'toolgate_config_reloads_total', type: 'counter', help: 'Configuration reloads by result', labelNames: ['result'] },
  lastReload: { name: 'toolgate_config_last_reload_successful', type: 'gauge', help: 'Whether the last configuration reload succeeded (1) or failed (0); 1 before any reload', labelNames: [] },
  ready: { name: 'toolgate_ready', type: 'gauge', help: 'Whether /readyz answers ready (1): 0 while a required upstream is down or the replica drains', labelNames: [] },
  // toolgate as an MCP server
  mcpStreams: { name: 'toolgate_mcp_streams_open', type: 'gauge', help: 'MCP session notification streams (GET /mcp) open on this replica', labelNames: [] },
  mcpSessions: { name: 'toolgate_mcp_sessions_started_total', type: 'counter', help: 'MCP sessions started by initialize, per tenant', labelNames: ['tenant'] },
  // Policies and batches (src/pipeline/policy-metrics.ts)
  policyDecisions: { name: 'toolgate_policy_decisions_total', type: 'counter', help: 'Policy decisions by policy and outcome', labelNames: ['policy', 'decision'] },
  batchGroupSize: { name: 'toolgate_batch_group_size', type: 'histogram', help: 'Calls per batch execution group', labelNames: [], buckets: [1, 2, 4, 8, 16, 32, 64] },
  circuitState: { name: 'toolgate_circuit_state', type: 'gauge', help: 'Circuit breaker state per upstream service (0 closed, 1 open, 2 half-open)', labelNames: ['service'] },
  budgetWarnings: { name: 'toolgate_budget_warnings_total', type: 'counter', help: 'Budgets that crossed their warn threshold (once per budget counter and period), by tenant, unit (calls or cost) and period', labelNames: ['tenant', 'unit', 'period'] },
  budgetRefusals: { name: 'toolgate_budget_refusals_total', type: 'counter', help: 'Calls a budget refused (QUOTA_EXCEEDED) or parked for approval at its limit, by tenant, unit and period', labelNames: ['tenant', 'unit', 'period'] },
  rateLimitRefusals: { name: 'toolgate_rate_limit_refusals_total', type: 'counter', help: 'Calls refused by the rate-limit policy, per tenant', labelNames: ['tenant'] },
  cedarDecisions: { name: 'toolgate_cedar_decisions_total', type: 'counter', help: "Cedar decisions by tenant (the tenant's policy set), action (list, call, read, get) and outcome (allow, deny, error)", labelNames: ['tenant', 'action', 'outcome'] },
  guardrailFindings: { name: 'toolgate_guardrail_findings_total', type: 'counter', help: 'Guardrail findings by tenant, detector kind, action and direction (arguments or result)', labelNames: ['tenant', 'detector', 'action', 'direction'] },
  upstreamDuration: { name: 'toolgate_upstream_call_duration_seconds', type: 'histogram', help: 'Duration of each attempt at an upstream service, by outcome (ok or errorType)', labelNames: ['service', 'outcome'], buckets: DEFAULT_DURATION_BUCKETS },
  // Upstreams (src/mcp, src/upstream-auth)
  upstreamUp: { name: 'toolgate_upstream_up', type: 'gauge', help: 'Whether an MCP upstream is connected (1) or not (0)', labelNames: ['service'] },
  upstreamEra: { name: 'toolgate_upstream_era', type: 'gauge', help: 'The MCP protocol era a connected upstream negotiated (1), by era: modern (2026-07-28) or legacy', labelNames: ['service', 'era'] },
  toolDefinitionChanged: { name: 'toolgate_tool_definition_changed_total', type: 'counter', help: 'Upstream tool definitions that changed after they were pinned (held out until accepted)', labelNames: ['service'] },
  upstreamTokenFetches: { name: 'toolgate_upstream_token_fetches_total', type: 'counter', help: 'Tokens obtained from upstream authorization servers (client credentials, exchange, refresh, connect)', labelNames: ['service', 'kind'] },
  upstreamTokenFailures: { name: 'toolgate_upstream_token_failures_total', type: 'counter', help: 'Failed token requests to upstream authorization servers', labelNames: ['service', 'kind'] },
  // Code mode (src/code-mode/code-mode-metrics.ts)
  codeModeCalls: { name: 'toolgate_code_mode_calls_total', type: 'counter', help: 'Code-mode scripts and the calls they made, by outcome', labelNames: ['kind', 'source', 'outcome'] },
  // State store (src/store/store-observability.ts)
  storeUp: { name: 'toolgate_store_up', type: 'gauge', help: 'Whether the shared state store answers (1) or not (0); an in-process store is always up', labelNames: [] },
  storeUnavailable: { name: 'toolgate_store_unavailable_total', type: 'counter', help: 'State store operations that failed because the store did not answer (down, unreachable or too slow)', labelNames: ['operation'] },
  // Approvals (src/approvals/approval-metrics.ts)
  approvalsPending: { name: 'toolgate_approvals_pending', type: 'gauge', help: 'Approval requests waiting for a decision, per tenant (read from the shared store: the same on every replica)', labelNames: ['tenant'] },
  approvalsNextExpiry: { name: 'toolgate_approvals_next_expiry_seconds', type: 'gauge', help: 'Seconds until the soonest pending approval of a tenant expires (absent when none is pending)', labelNames: ['tenant'] },
  approvalDecisions: { name: 'toolgate_approval_decisions_total', type: 'counter', help: 'Approval requests decided, per tenant and decision (approved, denied, expired)', labelNames: ['tenant', 'decision'] },
  approvalWait: { name: 'toolgate_approval_wait_seconds', type: 'histogram', help: 'Time from an approval request to its decision, per decision', labelNames: ['decision'], buckets: APPROVAL_WAIT_BUCKETS },
  // Audit (src/governance.ts)
  auditSinkErrors: { name: 'toolgate_audit_sink_errors_total', type: 'counter', help: 'Failed audit sink writes, per sink (a file append may carry several events)', labelNames: ['sink'] },
  auditCheckpointErrors: { name: 'toolgate_audit_checkpoint_errors_total', type: 'counter', help: 'Audit chain checkpoints that could not be written, per checkpoint place (file, http, store)', labelNames: ['sink'] },
} as const satisfies Record<string, MetricSpec>;

type Spec<Type extends MetricSpec['type']> = MetricSpec & { readonly type: Type };
/** The label names of a table entry, as prom-client's type parameter. */
export type LabelsOf<S extends MetricSpec> = S['labelNames'][number];

/** What a module may add to a table entry: where it registers, how it reads a value at scrape time. */
type Extra<Config> = Omit<Config, 'name' | 'help' | 'labelNames' | 'buckets' | 'registers'>;

const registers = (registry: Registry | undefined): Registry[] => (registry ? [registry] : []);

export function counter<S extends Spec<'counter'>>(registry: Registry | undefined, spec: S, extra: Extra<CounterConfiguration<LabelsOf<S>>> = {}): Counter<LabelsOf<S>> {
  return new Counter<LabelsOf<S>>({ ...extra, name: spec.name, help: spec.help, labelNames: spec.labelNames, registers: registers(registry) });
}

export function gauge<S extends Spec<'gauge'>>(registry: Registry | undefined, spec: S, extra: Extra<GaugeConfiguration<LabelsOf<S>>> = {}): Gauge<LabelsOf<S>> {
  return new Gauge<LabelsOf<S>>({ ...extra, name: spec.name, help: spec.help, labelNames: spec.labelNames, registers: registers(registry) });
}

/** `buckets` replaces the table's (the configured `metrics.durationBuckets`, in any order). */
export function histogram<S extends Spec<'histogram'>>(
  registry: Registry | undefined,
  spec: S,
  buckets: readonly number[] = spec.buckets ?? [],
  extra: Extra<HistogramConfiguration<LabelsOf<S>>> = {},
): Histogram<LabelsOf<S>> {
  return new Histogram<LabelsOf<S>>({ ...extra, name: spec.name, help: spec.help, labelNames: spec.labelNames, buckets: [...buckets].sort((a, b) => a - b), registers: registers(registry) });
}

/**
 * The metric of a table entry already on `registry`, or a new one: for modules of which several
 * instances share one registry (MCP providers), since prom-client refuses a name twice.
 */
export function sharedCounter<S extends Spec<'counter'>>(registry: Registry | undefined, spec: S): Counter<LabelsOf<S>> {
  const existing = registry?.getSingleMetric(spec.name);
  return existing instanceof Counter ? (existing as Counter<LabelsOf<S>>) : counter(registry, spec);
}

export function sharedGauge<S extends Spec<'gauge'>>(registry: Registry | undefined, spec: S): Gauge<LabelsOf<S>> {
  const existing = registry?.getSingleMetric(spec.name);
  return existing instanceof Gauge ? (existing as Gauge<LabelsOf<S>>) : gauge(registry, spec);
}

/**
 * A prom-client `labels()` child per label set, made once and found again through one Map per label:
 * no joined key and no rest arguments, since the call path looks several up per call. Label values
 * must be bounded, as for any label.
 */
export function labelChildren<Child>(make: (a: string, b: string, c: string) => Child): (a: string, b?: string, c?: string) => Child {
  const root = new Map<string, Map<string, Map<string, Child>>>();
  return (a, b = '', c = '') => {
    let second = root.get(a);
    if (second === undefined) root.set(a, (second = new Map()));
    let third = second.get(b);
    if (third === undefined) second.set(b, (third = new Map()));
    let child = third.get(c);
    if (child === undefined) third.set(c, (child = make(a, b, c)));
    return child;
  };
}

/** One label set of a counter, looked up once by a caller that counts it on every call. */
export interface CounterCell {
  inc(): void;
}

/**
 * A table counter whose label sets count in plain numbers between reads: `cell(a, b, c)` is one label set's
 * cell (values in `labelNames` order), and the Counter's own `collect`, which prom-client runs on every read,
 * adds what the cells counted. For the counters bumped several times per call (an HTTP count, a call count,
 * a tenant count, a `pass` per policy layer): prom-client's `inc` hashes and checks the label set on every
 * call, even through a `labels()` child, and that measured 5 % or more of a hot-path request
 * (docs/architecture.md#why-our-own). A cell shows at 0 from the first read after its lookup.
 */
export function cellCounter<S extends Spec<'counter'>>(registry: Registry | undefined, spec: S): { counter: Counter<LabelsOf<S>>; cell: (a: string, b?: string, c?: string) => CounterCell } {
  const cells: Array<{ labels: LabelValues<LabelsOf<S>>; pending: number; shown: boolean }> = [];
  const metric = counter(registry, spec, {
    collect() {
      for (const cell of cells) {
        if (cell.pending === 0 && cell.shown) continue;
        this.inc(cell.labels, cell.pending);
        cell.pending = 0;
        cell.shown = true;
      }
    },
  });
  const cell = labelChildren((...values: string[]): CounterCell => {
    const state = { labels: Object.fromEntries(spec.labelNames.map((name, i) => [name, values[i] ?? ''])) as LabelValues<LabelsOf<S>>, pending: 0, shown: false };
    cells.push(state);
    return {
      inc() {
        state.pending += 1;
      },
    };
  });
  return { counter: metric, cell };
}

/** One label set of a histogram, looked up once by a caller that observes it on every call. */
export interface HistogramCell {
  observe(value: number): void;
}

/** Observations one label set holds before they are handed to prom-client together: 512 bytes per label set observed (a catalog of 10,000 tools called: 5 MiB). */
export const OBSERVATION_BATCH = 64;

/**
 * A table histogram whose label sets observe into a small buffer of their own (`cell(a, b, c)`, values in
 * `labelNames` order), handed to the label set's prom-client `labels()` child in one go: when the buffer is
 * full, and on every read through the Histogram's own `collect`, which prom-client runs before it reports
 * (its public API). A read so shows every observation made before it, each observed by prom-client with the
 * same value in the same order: the buckets, `_sum` and `_count` are those of observing at once. prom-client
 * still does all of the histogram's work; only when it runs moves. Why: its `observe` checks and hashes the
 * label set and looks the bucket up by a string key on every call, even through a `labels()` child, and on
 * the hot path its histogram code held 2.4-2.9 µs of a request (its code and data cold between two
 * requests), about a third of that in batches (docs/architecture.md#why-our-own). A value prom-client would refuse (not
 * finite) is not buffered: the caller checks, as before. `registry.resetMetrics()` drops what was observed,
 * not what waits in a buffer (tests only).
 */
export function batchedHistogram<S extends Spec<'histogram'>>(
  registry: Registry | undefined,
  spec: S,
  buckets?: readonly number[],
): { histogram: Histogram<LabelsOf<S>>; cell: (a: string, b?: string, c?: string) => HistogramCell } {
  const flushes: Array<() => void> = [];
  const metric = histogram(registry, spec, buckets, {
    collect() {
      for (const flush of flushes) flush();
    },
  });
  const cell = labelChildren((...values: string[]): HistogramCell => {
    const child = metric.labels(...values.slice(0, spec.labelNames.length));
    const pending = new Float64Array(OBSERVATION_BATCH);
    let count = 0;
    const flush = (): void => {
      // Taken before observing: an observation that throws (none should) does not repeat the ones before it.
      const taken = count;
      count = 0;
      for (let index = 0; index < taken; index += 1) child.observe(pending[index]!);
    };
    flushes.push(flush);
    return {
      observe(value) {
        pending[count] = value;
        count += 1;
        if (count === OBSERVATION_BATCH) flush();
      },
    };
  });
  return { histogram: metric, cell };
}
