import type { JsonObject } from '../call/types.js';

/**
 * A tenant's binding rules: `tenants.<t>.bindings` under the bind-arguments policy's own `bindings`
 * (which win per tool name or glob). One definition for the policy that applies them and the registry
 * that hides their keys from the model.
 */
export function mergeBindings(tenantBindings: Record<string, JsonObject> | undefined, policyOptions: unknown): Record<string, JsonObject> {
  const own =
    policyOptions !== null && typeof policyOptions === 'object' && !Array.isArray(policyOptions)
      ? (policyOptions as { bindings?: Record<string, JsonObject> }).bindings
      : undefined;
  return { ...(tenantBindings ?? {}), ...(own ?? {}) };
}
