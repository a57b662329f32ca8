// What governs a resource read or a prompt get besides exposure (docs/architecture.md#resources-and-prompts):
// one audit event each, and the tenant's rate limit, whose budget tool calls share.
import { argumentsHash, catalogEvent } from '../audit/events.js';
import type { AuditSink, CatalogErrorType } from '../audit/types.js';
import type { OnStoreUnavailable, TenantConfig } from '../config/types.js';
import type { PolicyMetrics } from '../pipeline/policy-metrics.js';
import { hitWindowLimit, PROMPT_GET_NAME, RESOURCE_READ_NAME, windowLimitOf, type WindowLimit } from '../rate-limit/window-limit.js';
import type { StateStore } from '../store/types.js';
import type { Principal } from '../call/principal.js';
import { CatalogNotFound, CatalogRateLimited, CatalogUpstreamError } from './resource-catalog-errors.js';

export interface CatalogGovernanceDeps {
  audit: AuditSink;
  store: StateStore;
  metrics?: PolicyMetrics | undefined;
  onStoreUnavailable?: OnStoreUnavailable | undefined;
}

export interface CatalogGovernance {
  readonly deps: CatalogGovernanceDeps;
  /** The tenant's rate limit (its `policies.rate-limit`), or undefined when it has none or switched it off. */
  limitOf(config: TenantConfig): WindowLimit | undefined;
}

/** Made once per route plugin; the counts live in the store, so every instance and replica counts together. */
export function createCatalogGovernance(deps: CatalogGovernanceDeps): CatalogGovernance {
  // Parsed once per tenant config object (a reload makes new ones); the chain validated them at build.
  const limits = new WeakMap<TenantConfig, WindowLimit | null>();
  return {
    deps,
    limitOf(config) {
      let limit = limits.get(config);
      if (limit === undefined) {
        const options = config.policies['rate-limit'];
        limit = options === undefined || options === false ? null : windowLimitOf(options, deps.onStoreUnavailable);
        limits.set(config, limit);
      }
      return limit ?? undefined;
    },
  };
}

/** Who reads or gets, over which wire, and what governs it. */
export interface CatalogCaller {
  principal: Principal;
  requestId: string;
  via: 'mcp' | 'rest';
  governance: CatalogGovernance;
}

export type CatalogKind = 'resource' | 'prompt';

/** Counts the read or get against the tenant's rate limit; throws CatalogRateLimited over it. */
export async function admit(caller: CatalogCaller, config: TenantConfig, kind: CatalogKind): Promise<void> {
  const limit = caller.governance.limitOf(config);
  if (!limit) return;
  const decision = await hitWindowLimit(limit, caller.governance.deps.store, caller.principal, kind === 'resource' ? RESOURCE_READ_NAME : PROMPT_GET_NAME);
  if (decision.allowed) return;
  caller.governance.deps.metrics?.rateLimited(caller.principal.tenant);
  throw new CatalogRateLimited(decision.message, decision.retryAfterMs);
}

function errorTypeOf(kind: CatalogKind, error: unknown): CatalogErrorType {
  if (error instanceof CatalogNotFound) return error.reason === 'denied' ? 'PERMISSION_DENIED' : kind === 'resource' ? 'UNKNOWN_RESOURCE' : 'UNKNOWN_PROMPT';
  if (error instanceof CatalogRateLimited) return 'RATE_LIMITED';
  if (error instanceof CatalogUpstreamError) return 'UPSTREAM_ERROR';
  return 'INTERNAL_ERROR';
}

/**
 * Runs one read or get and writes its audit event, whatever the outcome. `work` reports the owning
 * service once the name resolved to one the caller reaches. Prompt arguments are recorded as a hash only.
 */
export async function audited<T>(caller: CatalogCaller, kind: CatalogKind, name: string, args: Record<string, string> | undefined, work: (resolved: (service: string) => void) => Promise<T>): Promise<T> {
  const { audit } = caller.governance.deps;
  if (audit.enabled === false) return work(() => {});
  const time = Date.now();
  let service: string | null = null;
  let errorType: CatalogErrorType | null = null;
  try {
    return await work((resolved) => {
      service = resolved;
    });
  } catch (error) {
    errorType = errorTypeOf(kind, error);
    throw error;
  } finally {
    const origin = { requestId: caller.requestId, tenant: caller.principal.tenant, user: caller.principal.user };
    const argsSha256 = kind === 'prompt' ? argumentsHash(args ?? {}) : null;
    audit.write(catalogEvent(origin, { kind, via: caller.via, name, service, argsSha256, time, durationMs: Math.max(0, Date.now() - time), errorType }));
  }
}
