// Charging a call against its budgets (docs/governance.md#budgets): one atomic store step before the call
// runs, one more after it only when its cost changes (a returned cost, a refund), and the warn-once step when
// a threshold is crossed. The budget policy (policies/budget.ts) decides what to do with the outcome.
import type { AuditSink } from '../audit/types.js';
import type { PolicyMetrics } from '../pipeline/policy-metrics.js';
import type { Counter, StateStore, Tally } from '../store/types.js';
import type { Principal } from '../call/principal.js';
import type { ToolCall, ToolResult } from '../call/types.js';
import type { Budget, BudgetWindow, CompiledBudgets } from './compile.js';
import { tenantTag } from './compile.js';

/** How many users and tools each budget's period ranks (the admin usage view, the console's top lists). */
export const TALLY_KEEP = 100;
/** The key of a tool's own cost report, in its result's trace or the trace's MCP `_meta`. */
export const RETURNED_COST_KEY = 'toolgate/cost';

export interface Charged {
  charged: true;
  budgets: readonly Budget[];
  windows: BudgetWindow[];
  amounts: number[];
  /** Usage of each budget after this call's charge. */
  used: number[];
  cost: { cost: number; max?: number };
}

export type ChargeOutcome = Charged | { charged: false; budget: Budget; window: BudgetWindow; used: number };

// The last tally keys made per budget and tenant: one period's keys serve every call of that period.
const lastTally = new WeakMap<Budget, Map<string, { periodKey: string; keys: { users: string; tools: string } }>>();

/** Where a budget's period ranks its users and tools. */
export function tallyKeys(budget: Budget, tenant: string, window: BudgetWindow): { users: string; tools: string } {
  let byTenant = lastTally.get(budget);
  if (!byTenant) lastTally.set(budget, (byTenant = new Map()));
  const last = byTenant.get(tenant);
  if (last?.periodKey === window.periodKey) return last.keys;
  const base = `${tenantTag(tenant)}:budget:${budget.id}:top:${window.periodKey}`;
  const keys = { users: `${base}:users`, tools: `${base}:tools` };
  byTenant.set(tenant, { periodKey: window.periodKey, keys });
  return keys;
}

const amountFor = (budget: Budget, cost: number): number => (budget.unit === 'calls' ? 1 : cost);

/** The cost a tool reported in its result, if it may report one (toolCosts `{cost, max}`), clamped to 0…max. */
export function returnedCost(result: ToolResult, max: number | undefined): number | undefined {
  if (max === undefined || typeof result.trace !== 'object' || result.trace === null) return undefined;
  const trace = result.trace as Record<string, unknown>;
  const meta = typeof trace._meta === 'object' && trace._meta !== null ? (trace._meta as Record<string, unknown>) : undefined;
  const reported = trace[RETURNED_COST_KEY] ?? meta?.[RETURNED_COST_KEY];
  if (typeof reported !== 'number' || !Number.isFinite(reported)) return undefined;
  return Math.min(max, Math.max(0, Math.round(reported)));
}

/** Failures for the upstream's reasons, which budgets with `onUpstreamFailure: refund` do not charge. */
const upstreamFailure = (result: ToolResult): boolean => result.error?.errorType === 'UPSTREAM_ERROR' || result.error?.errorType === 'TIMEOUT';

export interface MeterDeps {
  store: StateStore;
  audit: AuditSink;
  metrics?: PolicyMetrics;
  now: () => number;
}

export interface Meter {
  /**
   * Charges the call against every budget counting it, or none when one would pass its limit. `approved`: a
   * call a human approved, which approve-mode budgets no longer stop. Undefined when no budget counts it.
   */
  charge(call: ToolCall, principal: Principal, approved: boolean): Promise<ChargeOutcome> | undefined;
  /** After the call: corrects the charge (returned cost, refund), audits a crossed warn threshold, and tells a budget near its limit. */
  settle(charged: Charged, call: ToolCall, principal: Principal, requestId: string, result: ToolResult): ToolResult | Promise<ToolResult>;
}

export function createMeter(compiled: CompiledBudgets, deps: MeterDeps): Meter {
  const { store } = deps;

  const correct = async (charged: Charged, call: ToolCall, principal: Principal, result: ToolResult): Promise<void> => {
    const returned = returnedCost(result, charged.cost.max);
    const failed = upstreamFailure(result);
    const counters: Counter[] = [];
    const tallies: Tally[] = [];
    charged.budgets.forEach((budget, i) => {
      const window = charged.windows[i]!;
      let delta = budget.unit === 'cost' && returned !== undefined ? returned - charged.cost.cost : 0;
      if (failed && budget.refundOnFailure) delta = -charged.amounts[i]!;
      if (delta === 0) return;
      counters.push({ keys: [window.keys[0]!], amount: delta, expiresAt: window.expiresAt });
      charged.used[i]! += delta;
      const keys = tallyKeys(budget, principal.tenant, window);
      tallies.push({ key: keys.users, member: principal.user, amount: delta, expiresAt: window.expiresAt, keep: TALLY_KEEP }, { key: keys.tools, member: call.name, amount: delta, expiresAt: window.expiresAt, keep: TALLY_KEEP });
    });
    if (counters.length > 0) await store.chargeCounters({ counters, tallies });
  };

  const warn = async (charged: Charged, call: ToolCall, principal: Principal, requestId: string): Promise<void> => {
    const now = deps.now();
    for (const [i, budget] of charged.budgets.entries()) {
      const used = charged.used[i]!;
      const threshold = budget.warnAt * budget.limit;
      if (!(used - charged.amounts[i]! < threshold && used >= threshold)) continue;
      const window = charged.windows[i]!;
      // Once per counter and period, whichever replica's call crossed it first.
      const first = await store.setIfAbsent(`${window.keys[0]!}:warned:${window.periodKey}`, '1', { ttlMs: Math.max(1, window.expiresAt - now) });
      if (!first) continue;
      deps.metrics?.budget('warned', principal.tenant, budget.unit, budget.period);
      deps.audit.write({
        event: 'budget', time: now, requestId, tenant: principal.tenant, user: principal.user, kind: 'warn', outcome: 'warned',
        budget: budget.id, unit: budget.unit, used, limit: budget.limit, resetAt: new Date(window.resetAt).toISOString(), tool: call.name, callId: call.callId,
      });
    }
  };

  return {
    charge(call, principal, approved) {
      const budgets = compiled.matching(call.name, principal);
      if (budgets.length === 0) return undefined;
      const now = deps.now();
      const cost = compiled.costOf(call.name);
      const windows = budgets.map((budget) => budget.window(now, principal, call.name));
      const amounts = budgets.map((budget) => amountFor(budget, cost.cost));
      const counters: Counter[] = budgets.map((budget, i) => ({
        keys: windows[i]!.keys,
        amount: amounts[i]!,
        ...(approved && budget.onLimit === 'approve' ? {} : { limit: budget.limit }),
        expiresAt: windows[i]!.expiresAt,
      }));
      const tallies: Tally[] = [];
      budgets.forEach((budget, i) => {
        const keys = tallyKeys(budget, principal.tenant, windows[i]!);
        const expiresAt = windows[i]!.expiresAt;
        tallies.push({ key: keys.users, member: principal.user, amount: amounts[i]!, expiresAt, keep: TALLY_KEEP }, { key: keys.tools, member: call.name, amount: amounts[i]!, expiresAt, keep: TALLY_KEEP });
      });
      return store.chargeCounters({ counters, tallies }).then((outcome): ChargeOutcome => {
        if (outcome.charged) return { charged: true, budgets, windows, amounts, used: outcome.used, cost };
        const budget = budgets[outcome.refused]!;
        deps.metrics?.budget('refused', principal.tenant, budget.unit, budget.period);
        return { charged: false, budget, window: windows[outcome.refused]!, used: outcome.used[outcome.refused]! };
      });
    },
    settle(charged, call, principal, requestId, result) {
      const corrects = charged.cost.max !== undefined || (upstreamFailure(result) && charged.budgets.some((b) => b.refundOnFailure));
      const near = (): boolean => charged.budgets.some((budget, i) => charged.used[i]! >= budget.warnAt * budget.limit);
      // Most calls: nothing to correct and no budget near its limit, answered without another promise.
      if (!corrects && !near()) return result;
      return (async () => {
        if (corrects) await correct(charged, call, principal, result);
        if (!near()) return result;
        await warn(charged, call, principal, requestId);
        return { ...result, budget: tightest(charged) };
      })();
    },
  };
}

/** The budget with the least left (by share of its limit), as the ToolResult's `budget` and the REST headers tell it. */
function tightest(charged: Charged): NonNullable<ToolResult['budget']> {
  let best = 0;
  let bestShare = Infinity;
  charged.budgets.forEach((budget, i) => {
    const share = budget.limit === 0 ? 0 : (budget.limit - charged.used[i]!) / budget.limit;
    if (share < bestShare) [best, bestShare] = [i, share];
  });
  const budget = charged.budgets[best]!;
  return { id: budget.id, unit: budget.unit, limit: budget.limit, remaining: Math.max(0, budget.limit - charged.used[best]!), resetAt: new Date(charged.windows[best]!.resetAt).toISOString() };
}

/** The `budget` of a refusal: nothing left until `resetAt`. */
export function exhausted(budget: Budget, window: BudgetWindow, used: number): NonNullable<ToolResult['budget']> {
  return { id: budget.id, unit: budget.unit, limit: budget.limit, remaining: Math.max(0, budget.limit - used), resetAt: new Date(window.resetAt).toISOString() };
}
