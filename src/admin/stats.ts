import type { ApprovalAuditEvent, AuditEvent, CallAuditEvent } from '../audit/types.js';

const MINUTE_MS = 60_000;
export const STATS_MINUTES = 60;
// Latency buckets (ms, upper bounds); p95 is reported as the upper bound of the bucket holding it.
const BOUNDS = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, Number.POSITIVE_INFINITY];
// A tenant's distinct tool series are capped; past it calls count under OTHER (names come from the catalog, but
// user-level MCP tools are per user and are counted under one USER_TOOLS series).
const MAX_TOOLS_PER_TENANT = 200;
const OTHER = '(other tools)';
const USER_TOOLS = '(user MCP tools)';
// Calls refused before their name resolved to a tool (an unknown name, a malformed request): counted under one
// series, never under the name the caller sent.
const UNRESOLVED = '(not resolved to a tool)';

interface Minute {
  minute: number;
  calls: number;
  errors: number;
  /** Calls whose duration is in the buckets: a denied approval's is the decision's, not a run's. */
  timed: number;
  buckets: Uint32Array;
}

export interface ToolSeries {
  tool: string;
  calls: number[];
  errors: number[];
  /** Upper bound (ms) of the bucket holding the 95th percentile, null in a minute without calls. */
  p95Ms: Array<number | null>;
}

export interface StatsView {
  /** ISO start of each minute, oldest first. */
  minutes: string[];
  total: { calls: number[]; errors: number[] };
  tools: ToolSeries[];
}

export interface CallStats {
  record(event: AuditEvent): void;
  view(tenant: string): StatsView;
}

const p95Of = (buckets: Uint32Array, count: number): number | null => {
  if (count === 0) return null;
  const target = Math.ceil(count * 0.95);
  let seen = 0;
  for (let i = 0; i < buckets.length; i += 1) {
    seen += buckets[i]!;
    if (seen >= target) return Number.isFinite(BOUNDS[i]!) ? BOUNDS[i]! : BOUNDS[BOUNDS.length - 2]!;
  }
  return null;
};

/**
 * Per-minute calls, errors and latency buckets per tenant and tool over the last hour, in this process
 * (each replica counts the calls it ended). Errors are every call that did not end `ok`, refusals included,
 * so the Overview counts what the Audit page shows as failed calls (docs/console.md). Memory is bounded: tenants × ≤ 201 series × 60 minutes.
 */
export function createCallStats(options: { now?: () => number } = {}): CallStats {
  const now = options.now ?? Date.now;
  const tenants = new Map<string, Map<string, Minute[]>>();

  const seriesName = (event: (CallAuditEvent | ApprovalAuditEvent) & { tool: string }, tools: Map<string, Minute[]>): string => {
    if (event.source === null) return UNRESOLVED;
    if (event.source === 'user-mcp') return USER_TOOLS;
    if (tools.has(event.tool) || tools.size < MAX_TOOLS_PER_TENANT) return event.tool;
    return OTHER;
  };

  return {
    record(event) {
      // Resource reads and prompt gets are no tool calls: they stay out of the per-tool series (the audit
      // log and the recent-audit copy have them).
      if (event.event !== 'call' && event.event !== 'approval') return;
      // Every call that ended, the same calls as the audit's call and approval lines: a call event that did
      // not wait for approval (it ran, or was refused before it ran), or the decision that ended a waiting
      // call (an approval's run writes no call event of its own; a denial ends the call unrun). A decision
      // that was not taken (`refused`) ends no call.
      const ended = event.event === 'call' ? event.outcome !== 'pending_approval' : event.outcome !== 'refused';
      if (!ended || event.tool === null) return;
      const ran = !(event.event === 'approval' && event.decision === 'deny');
      let tools = tenants.get(event.tenant);
      if (!tools) tenants.set(event.tenant, (tools = new Map()));
      const name = seriesName({ ...event, tool: event.tool }, tools);
      let ring = tools.get(name);
      if (!ring) tools.set(name, (ring = []));
      const minute = Math.floor(now() / MINUTE_MS);
      const slot = minute % STATS_MINUTES;
      let entry = ring[slot];
      if (!entry || entry.minute !== minute) ring[slot] = entry = { minute, calls: 0, errors: 0, timed: 0, buckets: new Uint32Array(BOUNDS.length) };
      entry.calls += 1;
      if (event.outcome !== 'ok') entry.errors += 1;
      if (ran) {
        entry.timed += 1;
        entry.buckets[BOUNDS.findIndex((bound) => event.durationMs <= bound)]! += 1;
      }
    },
    view(tenant) {
      const current = Math.floor(now() / MINUTE_MS);
      const first = current - STATS_MINUTES + 1;
      const minutes = Array.from({ length: STATS_MINUTES }, (_, i) => new Date((first + i) * MINUTE_MS).toISOString());
      const total = { calls: new Array<number>(STATS_MINUTES).fill(0), errors: new Array<number>(STATS_MINUTES).fill(0) };
      const tools: ToolSeries[] = [];
      for (const [tool, ring] of tenants.get(tenant) ?? []) {
        const series: ToolSeries = { tool, calls: [], errors: [], p95Ms: [] };
        for (let i = 0; i < STATS_MINUTES; i += 1) {
          const minute = first + i;
          const entry = ring[minute % STATS_MINUTES];
          const live = entry && entry.minute === minute ? entry : undefined;
          series.calls.push(live?.calls ?? 0);
          series.errors.push(live?.errors ?? 0);
          series.p95Ms.push(live ? p95Of(live.buckets, live.timed) : null);
          total.calls[i]! += live?.calls ?? 0;
          total.errors[i]! += live?.errors ?? 0;
        }
        if (series.calls.some((count) => count > 0)) tools.push(series);
      }
      tools.sort((a, b) => (a.tool < b.tool ? -1 : 1));
      return { minutes, total, tools };
    },
  };
}
