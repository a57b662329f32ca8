import fp from 'fastify-plugin';
import type { Governance } from '../governance.js';

declare module 'fastify' {
  interface FastifyInstance {
    governance: Governance;
  }
}

/** Shares the store, approvals and audit sink with routes; flushes audit and closes the store last. */
export const governancePlugin = fp<{ governance: Governance }>(
  async (app, { governance }) => {
    app.decorate('governance', governance);
    app.addHook('onClose', async () => {
      await governance.close();
    });
  },
  { name: 'toolgate-governance' },
);
