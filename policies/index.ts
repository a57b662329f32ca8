import type { BuiltinPolicies } from '../src/pipeline/types.js';
import { accessPolicy } from './access.js';
import { approvalPolicy } from './approval.js';
import { auditPolicy } from './audit.js';
import { bindArgumentsPolicy } from './bind-arguments.js';
import { budgetPolicy } from './budget.js';
import { cedarPolicy } from './cedar.js';
import { circuitBreakerPolicy } from './circuit-breaker.js';
import { guardrailsPolicy } from './guardrails.js';
import { maxDepthPolicy } from './max-depth.js';
import { rateLimitPolicy } from './rate-limit.js';
import { retryPolicy } from './retry.js';
import { timeoutPolicy } from './timeout.js';

/**
 * The built-in policies by name. The composition root (src/app.ts) hands this table to the gateway, which
 * builds each tenant's chain from it in the order of src/pipeline/order.ts.
 */
export const builtinPolicies: BuiltinPolicies = {
  audit: auditPolicy,
  'rate-limit': rateLimitPolicy,
  access: accessPolicy,
  'bind-arguments': bindArgumentsPolicy,
  cedar: cedarPolicy,
  approval: approvalPolicy,
  'max-depth': maxDepthPolicy,
  'circuit-breaker': circuitBreakerPolicy,
  budget: budgetPolicy,
  retry: retryPolicy,
  timeout: timeoutPolicy,
  guardrails: guardrailsPolicy,
};
