import fp from 'fastify-plugin';
import type { Registry } from 'prom-client';
import { createApprovalMetrics, type ApprovalMetrics } from '../approvals/approval-metrics.js';
import { createApprovalService } from '../approvals/service.js';
import type { ApprovalService } from '../approvals/types.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Human approval requests in the store (docs/governance.md), and their decisions. */
    approvals: ApprovalService;
    /** The approval metrics; the gateway starts its configured tenants' counts at 0. */
    approvalMetrics: ApprovalMetrics;
  }
}

/** The approvals service; it holds nothing of its own to close (its records live in the store). */
export const approvalsPlugin = fp<{ registry: Registry }>(
  async (app, { registry }) => {
    const approvalMetrics = createApprovalMetrics(registry);
    const approvals = createApprovalService({ store: app.store, onDecided: approvalMetrics.decided });
    approvalMetrics.watch(approvals);
    app.decorate('approvals', approvals);
    app.decorate('approvalMetrics', approvalMetrics);
  },
  { name: 'toolgate-approvals', dependencies: ['toolgate-store'] },
);
