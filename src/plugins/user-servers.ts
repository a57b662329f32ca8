import fp from 'fastify-plugin';
import type { EgressOptions } from '../egress/check-egress.js';
import { createUserMcpRegistrations, type UserMcpRegistrations } from '../mcp/user/registrations.js';

type AuthChanged = (tenant: string, sub: string, serviceId: string) => Promise<void>;

export interface UserServers {
  /** Users' own MCP servers (docs/security-model.md#user-mcp-servers): registrations in the store, egress-checked on PUT and on connect. */
  registrations: UserMcpRegistrations;
  /** Tells `listener` when a server with `auth` was removed or its URL or `auth` changed (the identity forgets the owner's connection). */
  onAuthChanged(listener: AuthChanged): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    userServers: UserServers;
  }
}

/** Users' own servers: limits per tenant from the live config, `auth` sealed with the live vault. */
export const userServersPlugin = fp<{ egress: EgressOptions }>(
  async (app, { egress }) => {
    const { liveConfig } = app;
    const listeners: AuthChanged[] = [];
    const registrations = createUserMcpRegistrations({
      store: app.store,
      egress,
      maxServers: (tenant) => liveConfig.tenant(tenant)?.userMcp.maxServers ?? 0,
      auth: { vault: liveConfig.vault, connectable: () => liveConfig.current().server.publicUrl !== undefined },
      onAuthChanged: async (tenant, sub, serviceId) => {
        for (const listener of listeners) await listener(tenant, sub, serviceId);
      },
    });
    app.decorate('userServers', { registrations, onAuthChanged: (listener: AuthChanged) => void listeners.push(listener) });
  },
  { name: 'toolgate-user-servers', dependencies: ['toolgate-store', 'toolgate-live-config'] },
);
