import type { Registry } from 'prom-client';
import { createRecentAudit, type RecentAudit } from './admin/recent-audit.js';
import { createCallStats, type CallStats } from './admin/stats.js';
import { createApprovalMetrics } from './approvals/metrics.js';
import { createApprovalService } from './approvals/service.js';
import type { ApprovalService } from './approvals/types.js';
import { chainedAuditSink, createAuditChain, type AuditChain } from './audit/chain.js';
import { createCheckpointer, createCheckpointWriter, publicKeysOf, signingKeyOf } from './audit/checkpoints.js';
import { recentStoredCheckpoints } from './audit/store-checkpoints.js';
import type { CopyCheckpoints } from './audit/verify-copy.js';
import { createAuditSink } from './audit/sinks.js';
import type { AuditSink } from './audit/types.js';
import type { GatewayConfig } from './config/types.js';
import { createCircuitRegistry } from './pipeline/circuit-state.js';
import type { PolicyDeps } from './pipeline/types.js';
import { createPolicyMetrics, type PolicyMetrics } from './pipeline/metrics.js';
import { counter, METRICS } from './observability/metric-table.js';
import type { MessageBus } from './store/bus.js';
import { createBus, createStore } from './store/create.js';
import { storeObservability } from './store/metrics.js';
import type { StateStore } from './store/types.js';
import { createTaskService, type TaskService } from './tasks/service.js';
import { createGuardrailMetrics } from './guardrails/metrics.js';
import type { Logger } from './types.js';

/** The process-wide services behind the policy stack. Built once at start-up (a reload keeps them). */
export interface Governance {
  store: StateStore;
  /** Messages between replicas (MCP session notifications and cancellations), beside the store. */
  bus: MessageBus;
  audit: AuditSink;
  /** The bounded per-tenant copy of audit events behind GET /v1/admin/audit. */
  recentAudit: RecentAudit;
  /** This replica's audit chains, while `audit.chain` is on. */
  auditChain?: AuditChain;
  /** With checkpoints in the state store: a tenant's newest ones and the keys that verify them (GET /v1/admin/audit/verify). */
  storedCheckpoints?: (tenant: string) => Promise<CopyCheckpoints>;
  /** The per-minute rollup behind GET /v1/admin/stats. */
  stats: CallStats;
  approvals: ApprovalService;
  /** Tasks (MCP `tools/call` with `task`, `/v1/execute` with `async`), in the store. */
  tasks: TaskService;
  metrics: PolicyMetrics;
  policyDeps: PolicyDeps;
  /** Starts the per-tenant approval and rate-limit counts of these (configured) tenants at 0. */
  knownTenants(tenants: readonly string[]): void;
  /** Flushes the audit log, then closes the store (unless the caller passed it in). */
  close(): Promise<void>;
}

export function createGovernance(config: GatewayConfig, options: { registry: Registry; log: Logger; store?: StateStore; durationBuckets?: readonly number[] }): Governance {
  const ownsStore = options.store === undefined;
  const observed = storeObservability(options.registry, options.log);
  const store = options.store ?? createStore(config.store, observed.hooks);
  observed.watch(store);
  const recentAudit = createRecentAudit({ store, max: config.admin.auditRecent, log: options.log });
  const stats = createCallStats();
  // The configured sink stays the system of record; the tee also feeds the admin API's copy and rollup.
  const auditErrors = counter(options.registry, METRICS.auditSinkErrors);
  if (config.audit.sink !== 'off') auditErrors.inc({ sink: config.audit.sink }, 0);
  const sink = createAuditSink(config.audit, {
    onError: (err) => {
      auditErrors.inc({ sink: config.audit.sink });
      options.log.error({ err }, 'audit write failed');
    },
  });
  const teed = recentAudit.tee(sink, (event) => stats.record(event));
  const chained = config.audit.chain ? chainAudit(config.audit.chain, teed, { ...options, store }) : undefined;
  const audit = chained?.audit ?? teed;
  const approvalMetrics = createApprovalMetrics(options.registry);
  const approvals = createApprovalService({ store, onDecided: approvalMetrics.decided });
  approvalMetrics.watch(approvals);
  const metrics = createPolicyMetrics(options.registry, { durationBuckets: options.durationBuckets });
  const circuits = createCircuitRegistry(metrics.circuitState);
  const bus = createBus(config.store);
  const tasks = createTaskService({ store, bus, approvals, audit, log: options.log });
  return {
    store,
    bus,
    audit,
    recentAudit,
    ...(chained ? { auditChain: chained.chain } : {}),
    ...(config.audit.chain?.checkpoints?.sink === 'store' ? { storedCheckpoints: storedCheckpointsOf(config.audit.chain, store) } : {}),
    stats,
    approvals,
    tasks,
    metrics,
    knownTenants(tenants) {
      approvalMetrics.knownTenants(tenants);
      metrics.knownTenants(tenants);
    },
    policyDeps: { store, audit, approvals, metrics, circuits, guardrails: createGuardrailMetrics(options.registry), onStoreUnavailable: config.store.kind === 'redis' ? config.store.onUnavailable : undefined },
    async close() {
      tasks.close();
      await audit.close();
      await bus.close();
      if (ownsStore) await store.close();
    },
  };
}

// Checkpoints the online check verifies at most: a few signature checks per request, never the whole list.
const ONLINE_CHECKPOINTS = 256;

function storedCheckpointsOf(config: NonNullable<GatewayConfig['audit']['chain']>, store: StateStore): (tenant: string) => Promise<CopyCheckpoints> {
  const publicKeys = publicKeysOf(config);
  return async (tenant) => ({ text: (await recentStoredCheckpoints(store, tenant, ONLINE_CHECKPOINTS)).text, publicKeys });
}

/** Chains every event written to `sink`; with checkpoints configured, signs the chains' heads beside it. */
function chainAudit(config: NonNullable<GatewayConfig['audit']['chain']>, sink: AuditSink, options: { registry: Registry; log: Logger; store: StateStore }): { audit: AuditSink; chain: AuditChain } {
  const chain = createAuditChain();
  const key = signingKeyOf(config);
  if (!config.checkpoints || !key) return { audit: chainedAuditSink(sink, chain), chain };
  const place = config.checkpoints.sink;
  const failures = counter(options.registry, METRICS.auditCheckpointErrors);
  failures.inc({ sink: place }, 0);
  const checkpointer = createCheckpointer({
    chain,
    flush: () => sink.flush(),
    write: createCheckpointWriter(config.checkpoints, { store: options.store }),
    key,
    every: config.checkpointEvery,
    seconds: config.checkpointSeconds,
    onError: (err) => {
      failures.inc({ sink: place });
      options.log.error({ err }, 'audit checkpoint not written');
    },
  });
  return { audit: chainedAuditSink(sink, chain, checkpointer), chain };
}
