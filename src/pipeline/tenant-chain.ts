import type { TenantConfig } from '../config/types.js';
import { invokeTool } from '../execution/invoke.js';
import { callFailure } from '../execution/tool-result.js';
import { composePolicies, type Next, type Policy } from './types.js';

// Minimal governance until the full policy stack is wired: the deny re-check must never be skipped.
const accessRecheck: Policy = async (call, ctx, next) => {
  const decision = ctx.checkAccess(call.tool);
  return decision.ok ? next(call, ctx) : callFailure(call, 'PERMISSION_DENIED', decision.reason);
};

/** The policy chain of one tenant around the terminal executor. */
export async function buildTenantChain(_tenantId: string, _tenant: TenantConfig): Promise<Next> {
  return composePolicies([accessRecheck], invokeTool);
}
