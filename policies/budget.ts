import Type from 'typebox';
import { parkForApproval } from '../src/approvals/park.js';
import { compileBudgets } from '../src/budgets/compile.js';
import { createMeter, exhausted, type Charged } from '../src/budgets/meter.js';
import { BudgetsSchema, ToolCostsSchema } from '../src/config/budget-schema.js';
import { callFailure } from '../src/call/tool-result.js';
import { systemClock } from '../src/pipeline/clock.js';
import { parsePolicyOptions } from '../src/pipeline/options.js';
import type { Answer, Next, PolicyContext, PolicyDeps, PolicyLayer } from '../src/pipeline/types.js';
import { isStoreUnavailable, STORE_RETRY_AFTER_MS } from '../src/store/unavailable.js';
import type { ToolCall, ToolResult } from '../src/call/types.js';
import { ApprovalOptions } from './approval.js';

/** Built by the tenant's chain from `tenants.<t>.budgets`, `toolCosts` and `toolsets` (src/pipeline/tenant-chain.ts). */
export const BudgetOptions = Type.Object(
  {
    budgets: BudgetsSchema,
    toolCosts: Type.Optional(ToolCostsSchema),
    toolsets: Type.Optional(Type.Unsafe<Record<string, { tools: string[] }>>({ type: 'object' })),
    /** The tenant's `policies.approval` options: how a call past an `onLimit: approve` budget is parked. */
    approval: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);

const STORE_DOWN = 'the budget cannot be checked while the state store is unavailable (store.onUnavailable: fail-closed); retry later';

/**
 * Budgets and quotas (docs/governance.md#budgets): charges a call against every budget counting it in one
 * atomic store step as it is about to run, and refuses it (QUOTA_EXCEEDED, retry after the period's reset) or
 * parks it for a human (`onLimit: approve`) when one budget would pass its limit; nothing is charged then.
 * Sits outside retry, so a retried call is charged once. After the call, a returned cost or a refund corrects
 * the charge, and a crossed warn threshold is audited once per period.
 */
export function budgetPolicy(options: unknown, deps: PolicyDeps): PolicyLayer | undefined {
  if (options === undefined) return undefined;
  const { budgets, toolCosts = {}, toolsets = {}, approval } = parsePolicyOptions('budget', BudgetOptions, options);
  if (budgets.length === 0) return undefined;
  // Parsed once, as the approval policy parses them: the same expiry and bounds for a parked budget call.
  const { expiresMs, tools: _tools, ...bounds } = parsePolicyOptions('approval', ApprovalOptions, approval === false ? undefined : approval);
  const compiled = compileBudgets(budgets, toolCosts, toolsets);
  const clock = deps.clock ?? systemClock;
  const meter = createMeter(compiled, { store: deps.store, audit: deps.audit, ...(deps.metrics ? { metrics: deps.metrics } : {}), now: () => clock.now() });
  const failOpen = deps.onStoreUnavailable === 'fail-open';

  const run = (next: Next, charged: Charged, call: ToolCall, ctx: PolicyContext): Promise<ToolResult> =>
    next(call, ctx).then((result) => {
      const settled = meter.settle(charged, call, ctx.principal, ctx.requestId, result);
      if (!(settled instanceof Promise)) return settled;
      return settled.catch((error: unknown) => {
        // The call ran: its result stands even when the correction or the warning could not be written.
        ctx.log.warn({ err: error, tool: call.name }, 'budget: settling the charge failed');
        return result;
      });
    });

  const wrap: PolicyLayer['wrap'] = (next, answer: Answer) => (call, ctx) => {
    let charging;
    try {
      charging = meter.charge(call, ctx.principal, ctx.approval !== undefined);
    } catch (error) {
      return Promise.reject(error);
    }
    if (!charging) return next(call, ctx);
    return charging.then(
      (outcome) => {
        if (outcome.charged) return run(next, outcome, call, ctx);
        const { budget, window, used } = outcome;
        if (budget.onLimit === 'approve') {
          return parkForApproval(deps.approvals, call, ctx, answer, { expiresMs, bounds }, `is past budget ${budget.id} (${budget.limit} ${budget.unit} per ${budget.period}) and needs human approval`);
        }
        const now = clock.now();
        const resetAt = new Date(window.resetAt).toISOString();
        const message = `budget ${budget.id} allows ${budget.limit} ${budget.unit} per ${budget.period} and ${used} are used; it resets at ${resetAt}`;
        return answer({ ...callFailure(call, 'QUOTA_EXCEEDED', message, { retryAfterMs: Math.max(1000, window.resetAt - now) }), budget: exhausted(budget, window, used) });
      },
      (error: unknown) => {
        if (!isStoreUnavailable(error)) throw error;
        if (failOpen) return next(call, ctx);
        return answer(callFailure(call, 'RATE_LIMITED', STORE_DOWN, { retryAfterMs: STORE_RETRY_AFTER_MS }));
      },
    );
  };
  return { appliesTo: (tool) => compiled.budgets.some((budget) => budget.countsTool(tool.name)), wrap };
}
