// A budget's usage as GET /v1/usage and GET /v1/admin/usage answer it (docs/api.md#usage): the JSON Schema the
// routes serialize with and the OpenAPI document shows, and the type read from it.
import type { Static } from 'typebox';

export const budgetUsage = {
  type: 'object',
  required: ['id', 'scope', 'unit', 'period', 'timeZone', 'limit', 'used', 'remaining', 'resetAt', 'warnAt', 'onLimit'],
  properties: {
    id: { type: 'string' },
    scope: { type: 'string', enum: ['tenant', 'user', 'role', 'toolset', 'tool'] },
    unit: { type: 'string', enum: ['calls', 'cost'] },
    period: { type: 'string', enum: ['day', 'week', 'month', 'rolling'] },
    timeZone: { type: 'string' },
    limit: { type: 'integer' },
    used: { type: ['integer', 'null'], description: 'Null in the admin view for per-user and per-tool budgets (see topUsers and topTools)' },
    remaining: { type: ['integer', 'null'] },
    resetAt: { type: 'string', format: 'date-time', description: 'When the period ends (rolling windows: when the oldest step leaves the window)' },
    warnAt: { type: 'number' },
    onLimit: { type: 'string', enum: ['refuse', 'approve'] },
    tool: { type: 'string', description: 'Per-tool budgets: the tool this line counts' },
  },
} as const;

const ranked = (key: 'user' | 'tool') =>
  ({ type: 'array', items: { type: 'object', required: [key, 'used'], properties: { [key]: { type: 'string' }, used: { type: 'integer' } } } }) as const;

export const adminBudgetUsage = {
  ...budgetUsage,
  required: [...budgetUsage.required, 'topUsers', 'topTools'],
  properties: { ...budgetUsage.properties, topUsers: ranked('user'), topTools: ranked('tool') },
} as const;

export type BudgetUsage = Static<typeof budgetUsage>;
export type AdminBudgetUsage = Static<typeof adminBudgetUsage>;
