import fp from 'fastify-plugin';
import { errors } from '../errors.js';

/**
 * Per-tenant in-flight bound (`tenants.<t>.limits.maxInFlight`), so one tenant cannot take every worker of
 * a replica. Once a shutdown has cancelled the running calls (`stopped`), a request that only now reaches
 * its calls has not started: it answers 503 + Retry-After rather than a call cut short.
 */
export function createTenantGate(stopped: () => boolean) {
  const inFlight = new Map<string, number>();
  return {
    enter(tenant: string, limit: number): void {
      if (stopped()) throw new errors.TG_NOT_READY('gateway is shutting down, retry later');
      const current = inFlight.get(tenant) ?? 0;
      if (current >= limit) throw new errors.TG_OVERLOADED(`tenant has ${limit} calls in flight`);
      inFlight.set(tenant, current + 1);
    },
    leave(tenant: string): void {
      const current = (inFlight.get(tenant) ?? 1) - 1;
      if (current <= 0) inFlight.delete(tenant);
      else inFlight.set(tenant, current);
    },
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    tenantGate: ReturnType<typeof createTenantGate>;
  }
}

/** One gate for every route that runs calls (/v1/execute, the batch endpoint, /mcp). */
export const tenantGatePlugin = fp(
  async (app) => {
    app.decorate('tenantGate', createTenantGate(() => app.drain.cancelled));
  },
  { name: 'toolgate-tenant-gate', dependencies: ['toolgate-gateway'] },
);
