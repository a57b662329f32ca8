import type { Registry } from 'prom-client';
import { tenantLabels, tenantsAtZero } from '../observability/tenant-label.js';
import { cellCounter, counter, gauge, histogram, labelChildren, METRICS, type CounterCell } from '../observability/metric-table.js';
import { USER_TOOL_LABEL, outcomeLabel } from '../observability/gateway-metrics.js';
import { ERROR_TYPES, type Tool, type ToolResult } from '../call/types.js';

export interface PolicyMetrics {
  /** decision: `pass` (handed on), `pending_approval`, or the errorType a policy answered with. */
  decision(policy: string, decision: string): void;
  /** The counter cell of one (policy, decision) pair, for callers that count it on every call. */
  decisionCell(policy: string, decision: string): CounterCell;
  batchGroup(size: number): void;
  /**
   * A circuit's state under its metric label. Several circuits may share a label (every tenant's circuit of
   * one service; user-level services, `__user__`), told apart by `member`: the label then shows the worst
   * state among them (open, then half-open, then closed).
   */
  circuitState(label: string, state: CircuitStateName, member?: string): void;
  /** A call the rate-limit policy refused; `tenant` is a configured tenant (the chain runs only for those). */
  rateLimited(tenant: string): void;
  /** A budget of a configured tenant crossed its warn threshold (`warned`) or stopped a call at its limit (`refused`). */
  budget(event: 'warned' | 'refused', tenant: string, unit: 'calls' | 'cost', period: string): void;
  /** Starts the per-tenant refusal count of these (configured) tenants at 0 when they all fit under the label bound (`tenantsAtZero`). */
  knownTenants(tenants: Iterable<string>): void;
  /** One attempt at an upstream (a tool with a `service`): how long the handler took and how it ended. */
  upstreamCall(tool: Tool, result: ToolResult, seconds: number): void;
  /** One Cedar decision (src/cedar): every label bounded (the capped tenant label, four actions, three outcomes). */
  cedarDecision(tenant: string, action: 'list' | 'call' | 'read' | 'get', outcome: 'allow' | 'deny' | 'error'): void;
}

export type CircuitStateName = 'closed' | 'open' | 'half_open';
const CIRCUIT_VALUE: Record<CircuitStateName, number> = { closed: 0, open: 1, half_open: 2 };

// One set per registry: building a second chain on one registry shares it (prom-client refuses a name twice).
const byRegistry = new WeakMap<Registry, PolicyMetrics>();

/** The `service` label of a tool's upstream: user-level services (named after their user) are one bucket. */
export function serviceLabel(tool: Tool): string {
  return tool.source === 'user-mcp' ? USER_TOOL_LABEL : tool.service ?? 'none';
}

/**
 * Policy, batch and upstream metrics on the Registry the server passes in. Labels are bounded: policy
 * names, error types, configured services and tenants.
 */
export function createPolicyMetrics(registry: Registry, options: { durationBuckets?: readonly number[] } = {}): PolicyMetrics {
  const known = byRegistry.get(registry);
  if (known) return known;
  const metrics = policyMetricsOn(registry, options.durationBuckets);
  byRegistry.set(registry, metrics);
  return metrics;
}

function policyMetricsOn(registry: Registry, durationBuckets: readonly number[] | undefined): PolicyMetrics {
  // A `pass` per policy layer per call: counted in plain numbers between reads (cellCounter).
  const { cell: decisionCell } = cellCounter(registry, METRICS.policyDecisions);
  const groups = histogram(registry, METRICS.batchGroupSize);
  const circuits = gauge(registry, METRICS.circuitState);
  const rateLimits = counter(registry, METRICS.rateLimitRefusals);
  const tenantLabel = tenantLabels(registry);
  const budgetWarnings = counter(registry, METRICS.budgetWarnings);
  const budgetRefusals = counter(registry, METRICS.budgetRefusals);
  const upstream = histogram(registry, METRICS.upstreamDuration, durationBuckets);
  const cedar = counter(registry, METRICS.cedarDecisions);
  // A cell looked up shows at 0 until counted: the chain looks its `pass` cells up when it is built.
  const upstreamChild = labelChildren((service, outcome) => upstream.labels(service, outcome));
  // Per shared label, the circuits not closed (a closed one is forgotten, so this stays small).
  const unwell = new Map<string, Map<string, CircuitStateName>>();
  const circuitState = (label: string, state: CircuitStateName, member = label): void => {
    if (member === label) return void circuits.set({ service: label }, CIRCUIT_VALUE[state]);
    let members = unwell.get(label);
    if (!members) unwell.set(label, (members = new Map()));
    if (state === 'closed') members.delete(member);
    else members.set(member, state);
    const states = new Set(members.values());
    circuits.set({ service: label }, CIRCUIT_VALUE[states.has('open') ? 'open' : states.has('half_open') ? 'half_open' : 'closed']);
  };
  return {
    decision: (policy, decision) => decisionCell(policy, decisionLabel(decision)).inc(),
    decisionCell: (policy, decision) => decisionCell(policy, decisionLabel(decision)),
    batchGroup: (size) => groups.observe(size),
    circuitState,
    rateLimited: (tenant) => rateLimits.inc({ tenant: tenantLabel(tenant) }),
    budget: (event, tenant, unit, period) => (event === 'warned' ? budgetWarnings : budgetRefusals).inc({ tenant: tenantLabel(tenant), unit, period }),
    knownTenants: (tenants) => {
      const labels = new Set<string>();
      for (const tenant of tenantsAtZero(registry, tenants)) labels.add(tenantLabel(tenant));
      for (const tenant of labels) rateLimits.inc({ tenant }, 0);
    },
    cedarDecision: (tenant, action, outcome) => cedar.inc({ tenant: tenantLabel(tenant), action, outcome }),
    upstreamCall: (tool, result, seconds) => {
      // prom-client refuses a non-finite observation.
      if (Number.isFinite(seconds)) upstreamChild(serviceLabel(tool), outcomeLabel(result)).observe(seconds);
    },
  };
}

const DECISIONS = new Set<string>(['pass', 'answered', 'retried', 'pending_approval', ...ERROR_TYPES]);
/** A decision label from the known set: a custom policy's odd errorType never becomes a new series. */
const decisionLabel = (decision: string): string => (DECISIONS.has(decision) ? decision : 'other');

const noopCell: CounterCell = { inc() {} };
export const noopPolicyMetrics: PolicyMetrics = { decision() {}, decisionCell: () => noopCell, batchGroup() {}, circuitState() {}, rateLimited() {}, budget() {}, upstreamCall() {}, knownTenants() {}, cedarDecision() {} };
