import fp from 'fastify-plugin';
import type { Registry } from 'prom-client';
import { createRecentAudit, type RecentAudit } from '../admin/recent-audit.js';
import { createCallStats, type CallStats } from '../admin/stats.js';
import { chainedAuditSink, createAuditChain, type AuditChain } from '../audit/chain.js';
import { createCheckpointer, createCheckpointWriter, publicKeysOf, signingKeyOf } from '../audit/checkpoints.js';
import { createAuditSink } from '../audit/sinks.js';
import { recentStoredCheckpoints } from '../audit/store-checkpoints.js';
import type { AuditSink } from '../audit/types.js';
import type { CopyCheckpoints } from '../audit/verify-copy.js';
import type { GatewayConfig } from '../config/types.js';
import { counter, METRICS } from '../observability/metric-table.js';
import type { StateStore } from '../store/types.js';
import type { Logger } from '../call/types.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The audit sink every event goes to (the configured sink, teed into the admin copy and rollup, chained when `audit.chain` is on). */
    audit: AuditSink;
    /** The bounded per-tenant copy of audit events behind GET /v1/admin/audit. */
    recentAudit: RecentAudit;
    /** The per-minute rollup behind GET /v1/admin/stats. */
    callStats: CallStats;
    /** This replica's audit chains, while `audit.chain` is on. */
    auditChain: AuditChain | undefined;
    /** With checkpoints in the state store: a tenant's newest ones and the keys that verify them (GET /v1/admin/audit/verify). */
    storedCheckpoints: ((tenant: string) => Promise<CopyCheckpoints>) | undefined;
  }
}

export interface AuditPluginOptions {
  config: GatewayConfig['audit'];
  /** `admin.auditRecent`: events kept per tenant for the admin API. */
  recent: number;
  registry: Registry;
}

/** The audit sink and what reads it back (docs/governance.md#the-audit-log); flushed and closed before the store. */
export const auditPlugin = fp<AuditPluginOptions>(
  async (app, { config, recent, registry }) => {
    const { store, log } = app;
    const recentAudit = createRecentAudit({ store, max: recent, log });
    const callStats = createCallStats();
    // The configured sink stays the system of record; the tee also feeds the admin API's copy and rollup.
    const sinkErrors = counter(registry, METRICS.auditSinkErrors);
    if (config.sink !== 'off') sinkErrors.inc({ sink: config.sink }, 0);
    const sink = createAuditSink(config, {
      onError: (err) => {
        sinkErrors.inc({ sink: config.sink });
        log.error({ err }, 'audit write failed');
      },
    });
    const teed = recentAudit.tee(sink, (event) => callStats.record(event));
    const chained = config.chain ? chainAudit(config.chain, teed, { registry, log, store }) : undefined;
    const audit = chained?.audit ?? teed;
    app.decorate('audit', audit);
    app.decorate('recentAudit', recentAudit);
    app.decorate('callStats', callStats);
    app.decorate('auditChain', chained?.chain);
    app.decorate('storedCheckpoints', config.chain?.checkpoints?.sink === 'store' ? storedCheckpointsOf(config.chain, store) : undefined);
    app.addHook('onClose', () => audit.close());
  },
  { name: 'toolgate-audit', dependencies: ['toolgate-store'] },
);

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
