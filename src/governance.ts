import type { Registry } from 'prom-client';
import { createApprovalService } from './approvals/service.js';
import type { ApprovalService } from './approvals/types.js';
import { createAuditSink } from './audit/sinks.js';
import type { AuditSink } from './audit/types.js';
import type { GatewayConfig } from './config/types.js';
import { createCircuitRegistry } from './pipeline/circuit-state.js';
import { DeadlineQueue } from './pipeline/deadline-queue.js';
import type { PolicyDeps } from './pipeline/deps.js';
import { createPolicyMetrics, type PolicyMetrics } from './pipeline/metrics.js';
import { createStore } from './store/create.js';
import type { StateStore } from './store/types.js';
import type { Logger } from './types.js';

/** The process-wide services behind the policy stack. Built once at start-up (a reload keeps them). */
export interface Governance {
  store: StateStore;
  audit: AuditSink;
  approvals: ApprovalService;
  metrics: PolicyMetrics;
  /** The timeout policy's deadlines of every tenant (a shutdown ends them at once). */
  deadlines: DeadlineQueue;
  policyDeps: PolicyDeps;
  /** Flushes the audit log, then closes the store (unless the caller passed it in). */
  close(): Promise<void>;
}

export function createGovernance(config: GatewayConfig, options: { registry: Registry; log: Logger; store?: StateStore }): Governance {
  const ownsStore = options.store === undefined;
  const store = options.store ?? createStore(config.store);
  const audit = createAuditSink(config.audit, { onError: (err) => options.log.error({ err }, 'audit write failed') });
  const approvals = createApprovalService({ store });
  const metrics = createPolicyMetrics(options.registry);
  const circuits = createCircuitRegistry(metrics.circuitState);
  const deadlines = new DeadlineQueue();
  return {
    store,
    audit,
    approvals,
    metrics,
    deadlines,
    policyDeps: { store, audit, approvals, metrics, circuits, deadlines },
    async close() {
      await audit.close();
      if (ownsStore) await store.close();
    },
  };
}
