// A tenant's budgets compiled once per config snapshot (docs/governance.md#budgets): which budgets count a
// call, what it costs, and the store keys of each budget's current period.
import { errors } from '../errors.js';
import { compileGlobs, type NameMatcher } from '../patterns/name-globs.js';
import { canonicalJson, sha256Hex } from '../shared/canonical-json.js';
import { hashTag } from '../store/hash-tag.js';
import type { Principal } from '../call/principal.js';
import { calendarSpan, checkTimeZone, rollingBucket, ROLLING_BUCKETS, type PeriodSpan } from './period.js';
import type { BudgetConfig, ToolCost } from '../config/budget-schema.js';

export const DEFAULT_WARN_AT = 0.8;
/** A rolling window's default length: one day. */
export const DEFAULT_WINDOW_MS = 86_400_000;

/** One budget as the policy and the usage routes use it. */
export interface Budget {
  readonly id: string;
  readonly scope: BudgetConfig['scope'];
  readonly unit: 'calls' | 'cost';
  readonly limit: number;
  readonly warnAt: number;
  readonly onLimit: 'refuse' | 'approve';
  readonly refundOnFailure: boolean;
  readonly period: BudgetConfig['period'];
  readonly timeZone: string;
  /** Whether calls to `tool` count against it (its tools and toolset), whoever makes them. */
  countsTool(tool: string): boolean;
  /** The role a caller must hold for its calls to count (scope role). */
  readonly role?: string;
  /** The period holding `now`: its keys (the one charged first) and when the budget next frees usage. */
  window(now: number, principal: Principal, tool: string): BudgetWindow;
}

export interface BudgetWindow {
  keys: string[];
  /** Epoch ms the charged key expires at. */
  expiresAt: number;
  /** When the period ends (calendar) or the oldest bucket leaves the window (rolling). */
  resetAt: number;
  /** Names this period in warn-once keys. */
  periodKey: string;
}

export interface CompiledBudgets {
  readonly budgets: readonly Budget[];
  /** The budgets counting calls to `tool` by `principal`, refuse-mode ones first (their refusal wins). */
  matching(tool: string, principal: Principal): readonly Budget[];
  /** A call's cost before it runs, and the most a returned cost may set it to (undefined: returned costs are ignored). */
  costOf(tool: string): { cost: number; max?: number };
}

/** Every key of one tenant's budgets shares this hash tag: a charge touches several budgets' counters at once. */
export function tenantTag(tenant: string): string {
  return hashTag(encodeURIComponent(tenant));
}

const enc = encodeURIComponent;

function defaultId(entry: BudgetConfig): string {
  const { id: _id, calls, cost: _cost, warnAt: _warn, onLimit: _on, onUpstreamFailure: _fail, ...counted } = entry;
  return `b-${sha256Hex(canonicalJson({ ...counted, unit: calls !== undefined ? 'calls' : 'cost' })).slice(0, 10)}`;
}

function fail(index: number, message: string): never {
  throw new errors.TG_CONFIG_INVALID(`budgets.${index}${message}`);
}

function compileOne(entry: BudgetConfig, index: number, toolsets: Readonly<Record<string, { tools: readonly string[] }>>): Budget {
  if ((entry.calls === undefined) === (entry.cost === undefined)) fail(index, ' needs exactly one of calls and cost');
  if (entry.scope === 'role' && !entry.role) fail(index, '.role is required with scope role');
  if (entry.scope === 'toolset' && !entry.toolset) fail(index, '.toolset is required with scope toolset');
  if (entry.period !== 'rolling' && entry.windowMs !== undefined) fail(index, '.windowMs is only for period rolling');
  const timeZone = entry.timeZone ?? 'UTC';
  try {
    checkTimeZone(timeZone);
  } catch {
    fail(index, `.timeZone ${JSON.stringify(timeZone)} is not a time zone this runtime knows (an IANA name such as Europe/Berlin)`);
  }
  let inToolset: NameMatcher = () => true;
  if (entry.scope === 'toolset') {
    const toolset = toolsets[entry.toolset!];
    if (!toolset) fail(index, `.toolset ${JSON.stringify(entry.toolset)} is not one of the tenant's toolsets`);
    inToolset = compileGlobs(toolset.tools);
  }
  let inTools: NameMatcher;
  try {
    inTools = compileGlobs(entry.tools ?? ['*']);
  } catch (error) {
    fail(index, `.tools: ${(error as Error).message}`);
  }
  const id = entry.id ?? defaultId(entry);
  const role = entry.role;
  const tag = `budget:${id}`;
  const windowMs = entry.windowMs ?? DEFAULT_WINDOW_MS;
  const scopePart = (principal: Principal, tool: string): string =>
    entry.scope === 'user' ? `u=${enc(principal.user)}` : entry.scope === 'tool' ? `n=${enc(tool)}` : '*';
  const principalParts = new WeakMap<Principal, string>();
  // A calendar span is found once and reused until it ends (Intl runs once per period, not per call).
  let span: PeriodSpan | undefined;
  const calendar = (now: number): PeriodSpan => {
    if (!span || now < span.start || now >= span.end) span = calendarSpan(now, entry.period as 'day' | 'week' | 'month', timeZone);
    return span;
  };
  return {
    id,
    scope: entry.scope,
    unit: entry.calls !== undefined ? 'calls' : 'cost',
    limit: entry.calls ?? entry.cost!,
    warnAt: entry.warnAt ?? DEFAULT_WARN_AT,
    onLimit: entry.onLimit ?? 'refuse',
    refundOnFailure: entry.onUpstreamFailure === 'refund',
    period: entry.period,
    timeZone,
    countsTool: (tool) => inTools(tool) && inToolset(tool),
    ...(role !== undefined ? { role } : {}),
    window(now, principal, tool) {
      // The principal's part of the key, once per principal object (token-cache principals serve many calls).
      let own = principalParts.get(principal);
      if (own === undefined) principalParts.set(principal, (own = `${tenantTag(principal.tenant)}:${tag}:${entry.scope === 'user' ? `u=${enc(principal.user)}` : '*'}`));
      const base = entry.scope === 'tool' ? `${tenantTag(principal.tenant)}:${tag}:${scopePart(principal, tool)}` : own;
      if (entry.period !== 'rolling') {
        const { start, end, key } = calendar(now);
        // Kept a minute past the end: a replica whose clock lags a little still reads the period it is in.
        return { keys: [`${base}:p=${key}`], expiresAt: end + 60_000, resetAt: end, periodKey: `${start}` };
      }
      const { index, bucketMs } = rollingBucket(now, windowMs);
      const keys: string[] = [];
      for (let i = 0; i < ROLLING_BUCKETS; i += 1) keys.push(`${base}:r=${windowMs}:${index - i}`);
      return { keys, expiresAt: (index + 1) * bucketMs + windowMs, resetAt: (index + 1) * bucketMs, periodKey: `${index}` };
    },
  };
}

/**
 * Compiles `tenants.<t>.budgets` and `toolCosts`, failing fast (TG_CONFIG_INVALID, key named) on a budget
 * without exactly one limit, an unknown time zone or toolset, or two budgets with one id.
 */
export function compileBudgets(
  entries: readonly BudgetConfig[],
  toolCosts: Readonly<Record<string, ToolCost>>,
  toolsets: Readonly<Record<string, { tools: readonly string[] }>> = {},
): CompiledBudgets {
  const budgets = entries.map((entry, index) => compileOne(entry, index, toolsets));
  const seen = new Set<string>();
  budgets.forEach((budget, index) => {
    if (seen.has(budget.id)) fail(index, `.id ${JSON.stringify(budget.id)} is used by another budget (give each an id of its own)`);
    seen.add(budget.id);
  });
  const ordered = [...budgets.filter((b) => b.onLimit === 'refuse'), ...budgets.filter((b) => b.onLimit === 'approve')];
  const priced = Object.entries(toolCosts).map(([glob, cost]) => ({ glob, match: compileGlobs([glob]), cost: typeof cost === 'number' ? { cost } : cost }));
  // Per tool name: names come from the tenant's catalog (the resolved tool), so both maps stay bounded by it.
  const byTool = new Map<string, readonly Budget[]>();
  const costs = new Map<string, { cost: number; max?: number }>();
  return {
    budgets,
    matching(tool, principal) {
      let found = byTool.get(tool);
      if (!found) byTool.set(tool, (found = ordered.filter((budget) => budget.countsTool(tool))));
      // Roles vary per principal: only role budgets are checked per call.
      return found.some((b) => b.role !== undefined) ? found.filter((b) => b.role === undefined || principal.roles.includes(b.role)) : found;
    },
    costOf(tool) {
      let cost = costs.get(tool);
      if (!cost) {
        // An exact name wins over globs; among globs, the first listed.
        const exact = Object.hasOwn(toolCosts, tool) ? toolCosts[tool] : undefined;
        cost = exact !== undefined ? (typeof exact === 'number' ? { cost: exact } : exact) : (priced.find((entry) => entry.match(tool))?.cost ?? { cost: 1 });
        costs.set(tool, cost);
      }
      return cost;
    },
  };
}
