// The `tenants.<t>.budgets` and `tenants.<t>.toolCosts` config keys (docs/governance.md#budgets): one schema
// for the config file and the budget policy, and the types read from it.
import Type, { type Static } from 'typebox';

const budgetId = () => Type.String({ pattern: '^[A-Za-z0-9_-]{1,40}$' });

export const BudgetSchema = Type.Object(
  {
    /** Its name in usage answers, headers, audit events and metrics; default a digest of what it counts. */
    id: Type.Optional(budgetId()),
    /** Who shares one counter: the whole tenant, each user, the callers holding `role`, or the tenant's calls to `toolset`'s tools. `tool`: each tool on its own. */
    scope: Type.Enum(['tenant', 'user', 'role', 'toolset', 'tool'] as const, { type: 'string' }),
    role: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    toolset: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    /** Tool names or globs the budget counts (default every tool). */
    tools: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { minItems: 1, maxItems: 64 })),
    /** Calendar periods start at midnight in `timeZone` (weeks on Monday); `rolling` is the last `windowMs`. */
    period: Type.Enum(['day', 'week', 'month', 'rolling'] as const, { type: 'string' }),
    timeZone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    windowMs: Type.Optional(Type.Integer({ minimum: 60_000, maximum: 366 * 86_400_000 })),
    /** The limit, in calls or in cost units (toolCosts); exactly one of the two. */
    calls: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000 })),
    cost: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000 })),
    /** Share of the limit at which a warning is audited once per period and the headers start. */
    warnAt: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1 })),
    onLimit: Type.Optional(Type.Enum(['refuse', 'approve'] as const, { type: 'string' })),
    /** A call that failed for the upstream's reasons (UPSTREAM_ERROR, TIMEOUT): still charged, or refunded. */
    onUpstreamFailure: Type.Optional(Type.Enum(['charge', 'refund'] as const, { type: 'string' })),
  },
  { additionalProperties: false },
);
export type BudgetConfig = Static<typeof BudgetSchema>;

/**
 * A tool's price in cost units: a number, or `{cost, max}` when the tool may report its own cost in its result
 * (`toolgate/cost` in its trace or MCP `_meta`), which then replaces `cost`, clamped to 0…max.
 */
export const ToolCostSchema = Type.Union([
  Type.Integer({ minimum: 0, maximum: 1_000_000 }),
  Type.Object({ cost: Type.Integer({ minimum: 0, maximum: 1_000_000 }), max: Type.Integer({ minimum: 0, maximum: 1_000_000 }) }, { additionalProperties: false }),
]);
export type ToolCost = Static<typeof ToolCostSchema>;

export const BudgetsSchema = Type.Array(BudgetSchema, { maxItems: 32 });
/** Tool name or glob → its cost; unlisted tools cost 1. */
export const ToolCostsSchema = Type.Unsafe<Record<string, ToolCost>>({ type: 'object', additionalProperties: ToolCostSchema, maxProperties: 1024 });
