import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import fp from 'fastify-plugin';
import { openapiDocument } from '../openapi.js';
import { sharedSchemas } from '../schemas/common.js';

/**
 * The shared schemas routes refer to (`ErrorBody#`, `ToolResult#`, `Readiness#`) and the OpenAPI document
 * built from every route registered after this plugin (openapi.yaml, /openapi.json, the UI at /docs).
 */
export const openapiPlugin = fp(
  async (app) => {
    for (const schema of sharedSchemas) app.addSchema(schema);
    await app.register(swagger, { openapi: openapiDocument, refResolver: { buildLocalReference: (json, _base, _fragment, index) => String(json.$id ?? `def-${index}`) } });
    await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: false }, staticCSP: true });
  },
  // The UI's routes are counted by admission too.
  { name: 'toolgate-openapi', dependencies: ['toolgate-admission'] },
);
