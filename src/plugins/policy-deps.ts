import fp from 'fastify-plugin';
import type { Registry } from 'prom-client';
import type { GatewayConfig } from '../config/types.js';
import { createGuardrailMetrics } from '../guardrails/metrics.js';
import { createCircuitRegistry } from '../pipeline/circuit-state.js';
import { createPolicyMetrics, type PolicyMetrics } from '../pipeline/policy-metrics.js';
import type { PolicyDeps } from '../pipeline/types.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** What every tenant's policy chain is built with (src/pipeline/types.ts): one per process, kept across reloads. */
    policyDeps: PolicyDeps;
    /** The chain's metrics (decisions, breakers, rate limits, batches). */
    policyMetrics: PolicyMetrics;
  }
}

export interface PolicyDepsPluginOptions {
  config: GatewayConfig;
  registry: Registry;
}

/** The services the policy chain reads (docs/architecture.md, "The policy chain"): store, audit, approvals, breakers, metrics. */
export const policyDepsPlugin = fp<PolicyDepsPluginOptions>(
  async (app, { config, registry }) => {
    const policyMetrics = createPolicyMetrics(registry, { durationBuckets: config.metrics.durationBuckets });
    const circuits = createCircuitRegistry(policyMetrics.circuitState);
    app.decorate('policyMetrics', policyMetrics);
    app.decorate('policyDeps', {
      store: app.store,
      audit: app.audit,
      approvals: app.approvals,
      metrics: policyMetrics,
      circuits,
      guardrails: createGuardrailMetrics(registry),
      onStoreUnavailable: config.store.kind === 'redis' ? config.store.onUnavailable : undefined,
    });
  },
  { name: 'toolgate-policy-deps', dependencies: ['toolgate-store', 'toolgate-audit', 'toolgate-approvals'] },
);
