import fp from 'fastify-plugin';
import type { GatewayConfig, TenantConfig } from '../config/types.js';
import type { Gateway } from '../gateway.js';
import { liveVault, type Vault } from '../upstream-auth/vault.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The configuration in force, for the services built before the gateway that need it (identity, user servers). */
    liveConfig: LiveConfig;
  }
}

export interface LiveConfig {
  /** The start-up config while the first snapshot is being built, then the gateway's live one (reloads included). */
  current(): GatewayConfig;
  /** A tenant's configuration: the file's while the first snapshot is built, then the compiled tenant's (file or store). */
  tenant(id: string): TenantConfig | undefined;
  /** Whether a tenant's pool can hold a tool of a service: false until the gateway (its catalog) serves. */
  reachesTools(tenant: string, service: string): boolean;
  /** The vault of the live `credentials` (users' client secrets and upstream tokens are sealed with it). */
  vault(): Vault;
  /**
   * From now on, answers from the gateway. Building the first snapshot already needs the services that read
   * this (listing a service's tools may need its credentials), so the gateway is handed over once it exists.
   */
  serve(gateway: Gateway): void;
}

/** The start-up config until `serve`, then the gateway's snapshots. */
export function createLiveConfig(started: GatewayConfig): LiveConfig {
  let gateway: Gateway | undefined;
  const current = (): GatewayConfig => gateway?.config ?? started;
  return {
    current,
    vault: liveVault(current),
    tenant(id) {
      // A file tenant's config is known whether or not it is compiled now; a stored one only while it is.
      if (gateway) return gateway.tenant(id)?.config ?? (Object.hasOwn(gateway.config.tenants, id) ? gateway.config.tenants[id] : undefined);
      return Object.hasOwn(started.tenants, id) ? started.tenants[id] : undefined;
    },
    reachesTools(tenant, service) {
      const view = gateway?.tenant(tenant);
      return view !== undefined && gateway!.current().catalog.tools.some((tool) => tool.service === service && view.reaches(tool));
    },
    serve(serving) {
      if (gateway) throw new Error('the live config already follows a gateway');
      gateway = serving;
    },
  };
}

/** The live config (one per app); the gateway plugin hands it the gateway (src/plugins/gateway.ts). */
export const liveConfigPlugin = fp<{ config: GatewayConfig }>(
  async (app, { config }) => {
    app.decorate('liveConfig', createLiveConfig(config));
  },
  { name: 'toolgate-live-config' },
);
