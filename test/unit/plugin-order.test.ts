import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { executeRoutes } from '../../routes/execute.js';
import { healthRoutes } from '../../routes/health.js';
import { admissionPlugin } from '../../src/plugins/admission.js';

// The order of the HTTP layer is declared by each plugin (`dependencies`), so a composition root that
// registers one too early fails at start-up instead of serving routes that skip a gate.
describe('plugin order', () => {
  it('refuses a route group registered before the plugins it relies on', async () => {
    const app = Fastify({ logger: false });
    app.register(executeRoutes);
    await expect(app.ready()).rejects.toThrow(/toolgate-auth/);
  });

  it('refuses admission (the in-flight gate) before authentication and the gateway', async () => {
    const app = Fastify({ logger: false });
    app.register(admissionPlugin);
    await expect(app.ready()).rejects.toThrow(/toolgate-gateway|toolgate-auth|'authenticate'/);
  });

  it('refuses public routes registered before the in-flight gate counts them', async () => {
    const app = Fastify({ logger: false });
    app.register(healthRoutes);
    await expect(app.ready()).rejects.toThrow(/toolgate-gateway|toolgate-admission/);
  });
});
