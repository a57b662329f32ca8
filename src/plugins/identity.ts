import fp from 'fastify-plugin';
import type { Registry } from 'prom-client';
import type { EgressOptions, Resolve } from '../egress/check-egress.js';
import { userServerTarget } from '../mcp/user/registration-auth.js';
import { userServiceKey } from '../registry/user-names.js';
import { createUpstreamIdentity, type UpstreamIdentity } from '../upstream-auth/identity.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Upstream identity (docs/security-model.md#upstream-identity): per-call OAuth credentials, connections in the store. */
    identity: UpstreamIdentity;
  }
}

export interface IdentityPluginOptions {
  registry: Registry;
  egress: EgressOptions;
  resolve?: Resolve | undefined;
}

/** The upstream identity, over the live config; the users' own servers with userOAuth take connections too. */
export const identityPlugin = fp<IdentityPluginOptions>(
  async (app, { registry, egress, resolve }) => {
    const { liveConfig } = app;
    const { registrations } = app.userServers;
    const identity = createUpstreamIdentity({
      store: app.store,
      config: liveConfig.current,
      vault: liveConfig.vault,
      metrics: registry,
      resolve,
      reachesTools: liveConfig.reachesTools,
      tenantConfig: liveConfig.tenant,
      userEgress: egress,
      // The user's own servers with userOAuth take connections too, named by their service key.
      userTargets: async (owner) =>
        (await registrations.list(owner.tenant, owner.user)).flatMap((registration) => {
          if (registration.auth?.type !== 'userOAuth') return [];
          try {
            const target = userServerTarget(owner, registration, liveConfig.vault());
            return target ? [target] : [];
          } catch {
            // A secret sealed with a key since removed: the server takes no connection until registered again.
            return [];
          }
        }),
    });
    app.userServers.onAuthChanged((tenant, sub, serviceId) => identity.connections.forget({ tenant, user: sub }, userServiceKey(sub, serviceId)));
    app.decorate('identity', identity);
  },
  { name: 'toolgate-identity', dependencies: ['toolgate-store', 'toolgate-live-config', 'toolgate-user-servers'] },
);
