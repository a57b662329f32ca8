import type { FastifyPluginAsync } from 'fastify';
import { ConfigError } from '../src/config/load.js';
import { errors } from '../src/errors.js';
import { bearerSecurity, errorResponses } from '../src/schemas/common.js';

/** Operator routes: config reload and upstream status — role `admin`. */
export const adminRoutes: FastifyPluginAsync = async (app) => {
  const adminOnly = [app.authenticate, app.requireRole('admin')];

  app.post(
    '/v1/admin/reload',
    {
      preHandler: adminOnly,
      schema: {
        tags: ['admin'],
        summary: 'Reload the configuration file (also on SIGHUP)',
        security: bearerSecurity,
        response: { 200: { type: 'object', properties: { reloaded: { type: 'boolean' }, changed: { type: 'boolean' } } }, ...errorResponses },
      },
    },
    async (request) => {
      try {
        const { changed } = await app.reloadConfig();
        request.log.info({ changed }, 'configuration reloaded');
        return { reloaded: true, changed };
      } catch (error) {
        if (error instanceof ConfigError) throw new errors.TG_CONFIG_INVALID(error.message);
        throw error;
      }
    },
  );

  app.get(
    '/v1/admin/upstreams',
    {
      preHandler: adminOnly,
      schema: {
        tags: ['admin'],
        summary: 'State of every upstream',
        security: bearerSecurity,
        response: { 200: { type: 'object', properties: { upstreams: { type: 'array', items: { type: 'object', additionalProperties: true } } } }, ...errorResponses },
      },
    },
    async () => ({ upstreams: app.gateway.status() }),
  );
};
