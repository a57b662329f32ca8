// What budgets have used (docs/api.md#usage): a caller's own view and a tenant admin's, read from the same
// counters and tallies the budget policy charges, in one store step per view (all keys share the tenant's slot).
import type { TenantConfig } from '../config/types.js';
import type { AdminBudgetUsage, BudgetUsage } from '../schemas/usage.js';
import type { Counter, StateStore } from '../store/types.js';
import type { Principal } from '../call/principal.js';
import { compileBudgets, type Budget, type BudgetWindow, type CompiledBudgets } from './compile.js';
import { tallyKeys } from './meter.js';

/** How many users and tools an admin view ranks per budget, and how many tools a per-tool budget shows. */
export const TOP_N = 10;

const compiledFor = new WeakMap<TenantConfig, CompiledBudgets>();

/** The tenant's budgets, compiled once per config object (the policy chain compiled the same ones at load). */
export function tenantBudgets(config: TenantConfig): CompiledBudgets {
  let compiled = compiledFor.get(config);
  if (!compiled) compiledFor.set(config, (compiled = compileBudgets(config.budgets, config.toolCosts, config.toolsets)));
  return compiled;
}

interface Line {
  budget: Budget;
  window: BudgetWindow;
  tool?: string;
}

function describe(line: Line, used: number | null): BudgetUsage {
  const { budget, window, tool } = line;
  return {
    id: budget.id, scope: budget.scope, unit: budget.unit, period: budget.period, timeZone: budget.timeZone, limit: budget.limit,
    used, remaining: used === null ? null : Math.max(0, budget.limit - used), resetAt: new Date(window.resetAt).toISOString(),
    warnAt: budget.warnAt, onLimit: budget.onLimit, ...(tool !== undefined ? { tool } : {}),
  };
}

async function read(store: StateStore, lines: Line[]): Promise<number[]> {
  if (lines.length === 0) return [];
  const counters: Counter[] = lines.map(({ window }) => ({ keys: window.keys, amount: 0, expiresAt: window.expiresAt }));
  return (await store.chargeCounters({ counters })).used;
}

/** The lines of one principal's view: a line per budget, per tool (its period's top tools) for per-tool budgets. */
async function linesOf(store: StateStore, budgets: readonly Budget[], principal: Principal, now: number): Promise<Line[]> {
  const lines: Line[] = [];
  for (const budget of budgets) {
    const window = budget.window(now, principal, '');
    if (budget.scope !== 'tool') {
      lines.push({ budget, window });
      continue;
    }
    const tools = await store.readTally(tallyKeys(budget, principal.tenant, window).tools, TOP_N);
    for (const { member } of tools) lines.push({ budget, window: budget.window(now, principal, member), tool: member });
  }
  return lines;
}

/**
 * A user's usage: every budget that counts their calls, with used, left and reset. `ownRoles`: the caller's own
 * view, where role budgets show only for roles they hold; an admin looking at another user sees every role budget.
 */
export async function userUsage(store: StateStore, compiled: CompiledBudgets, principal: Principal, now: number, ownRoles: boolean): Promise<BudgetUsage[]> {
  const budgets = compiled.budgets.filter((budget) => !ownRoles || budget.role === undefined || principal.roles.includes(budget.role));
  const lines = await linesOf(store, budgets, principal, now);
  const used = await read(store, lines);
  return lines.map((line, i) => describe(line, used[i]!));
}

/** A tenant admin's view: each budget's tenant-wide usage (per-user budgets: none), its top users and its top tools. */
export async function tenantUsage(store: StateStore, compiled: CompiledBudgets, tenant: string, now: number): Promise<AdminBudgetUsage[]> {
  const nobody: Principal = { tenant, user: '', roles: [], claims: {} };
  const shared = compiled.budgets.filter((budget) => budget.scope !== 'user' && budget.scope !== 'tool');
  const lines: Line[] = shared.map((budget) => ({ budget, window: budget.window(now, nobody, '') }));
  const used = await read(store, lines);
  const usedOf = new Map(lines.map((line, i) => [line.budget, used[i]!]));
  return Promise.all(
    compiled.budgets.map(async (budget) => {
      const window = budget.window(now, nobody, '');
      const keys = tallyKeys(budget, tenant, window);
      const [users, tools] = await Promise.all([store.readTally(keys.users, TOP_N), store.readTally(keys.tools, TOP_N)]);
      return {
        ...describe({ budget, window }, usedOf.get(budget) ?? null),
        topUsers: users.map(({ member, amount }) => ({ user: member, used: amount })),
        topTools: tools.map(({ member, amount }) => ({ tool: member, used: amount })),
      };
    }),
  );
}
