import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { JSONWebKeySet } from 'jose';
import { builtinPolicies } from '../policies/index.js';
import { createAuthenticator } from './auth/authenticator.js';
import { settingsNeedingRestart } from './config/restart-required.js';
import type { GatewayConfig } from './config/types.js';
import { errors } from './errors.js';
import { createHttpAgent } from './executors/http-client.js';
import { Gateway, UnknownTenantError } from './gateway.js';
import { createGovernance } from './governance.js';
import { installAdmission } from './http/admission.js';
import { Drain } from './http/drain.js';
import { bodyPending, installBodyDeadline } from './http/body-deadline.js';
import { acceptEmptyJsonBody } from './http/json-body.js';
import { limitConnectionsPerAddress } from './http/connection-limit.js';
import { AccessLogController, createLogger } from './observability/logger.js';
import { stdoutDestination } from './observability/stdout.js';
import { createMetrics } from './observability/metrics.js';
import { createMetricsServer } from './observability/metrics-server.js';
import { openapiDocument } from './openapi.js';
import { authPlugin } from './plugins/auth.js';
import { gatewayPlugin, type ReloadOutcome } from './plugins/gateway.js';
import { governancePlugin } from './plugins/governance.js';
import { createPinRegistry } from './mcp/pinning.js';
import { providerSpecsFor } from './providers.js';
import { sharedSchemas } from './schemas/common.js';
import { adminRoutes } from '../routes/admin.js';
import { adminActivityRoutes } from '../routes/admin-activity.js';
import { adminKeysRoutes } from '../routes/admin-keys.js';
import { adminToolsRoutes } from '../routes/admin-tools.js';
import { consoleRoutes } from '../routes/console.js';
import { meRoutes } from '../routes/me.js';
import { createRuntimeKeys } from './admin/api-keys.js';
import { approvalsRoutes } from '../routes/approvals.js';
import { docsRoutes } from '../routes/docs.js';
import { executeRoutes } from '../routes/execute.js';
import { oauthMetadataRoutes } from '../routes/oauth-metadata.js';
import { healthRoutes, readinessOf } from '../routes/health.js';
import { mcpRoutes } from '../routes/mcp.js';
import { metricsRoutes } from '../routes/metrics.js';
import { toolsRoutes } from '../routes/tools.js';
import { userRoutes } from '../routes/users.js';
import type { Resolve } from './egress/check-egress.js';
import type { StateStore } from './store/types.js';
import { createUserMcpProvider } from './user-mcp/provider.js';
import { createUserMcpRegistrations } from './user-mcp/registrations.js';

export interface BuildOptions {
  /** Fastify logger option or instance; defaults to JSON logs at the configured level. */
  logger?: FastifyServerOptions['logger'];
  loggerInstance?: FastifyServerOptions['loggerInstance'];
  env?: NodeJS.ProcessEnv;
  /** A JWKS served in-process (tests, benchmarks) instead of fetching auth.jwt.jwksUrl. */
  jwks?: JSONWebKeySet;
  /** Re-reads the config for reloads; without it reload answers with the current config. */
  loadConfig?: () => Promise<GatewayConfig>;
  /** Process metrics (event loop, GC…); off in tests that build many apps. */
  defaultMetrics?: boolean;
  /** Shared state to use instead of the one `store.kind` names (the caller then owns and closes it). */
  store?: StateStore;
  /** DNS resolution for the egress check (tests map hostnames without a resolver). */
  resolve?: Resolve;
  /** Folder of the built console (default dist/console under the package root). */
  consoleRoot?: string;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds the gateway as an un-listened Fastify instance (tests use inject; src/server.ts listens). */
export async function buildServer(config: GatewayConfig, options: BuildOptions = {}): Promise<FastifyInstance> {
  // By default logs go to the stdout destination the `stdout` audit sink shares (src/observability/stdout.ts).
  const loggerInstance = options.loggerInstance ?? (options.logger === undefined ? createLogger(config, stdoutDestination()) : undefined);
  const app: FastifyInstance = Fastify({
    ...(loggerInstance ? { loggerInstance } : { logger: options.logger }),
    bodyLimit: config.server.bodyLimit,
    trustProxy: config.server.trustProxy,
    requestIdHeader: false,
    logController: new AccessLogController({ requestIdLogLabel: 'requestId' }),
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // Requests arriving while the replica drains answer 503 + Retry-After with a TG_ code (src/http/admission.ts).
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, useDefaults: true, allErrors: false } },
  });

  const env = options.env ?? process.env;
  const metrics = createMetrics({ defaultMetrics: options.defaultMetrics, durationBuckets: config.metrics.durationBuckets });
  const agent = createHttpAgent();
  // Store (options.store, else `store.kind` from config), approvals, audit sink and policy metrics.
  const governance = createGovernance(config, { registry: metrics.registry, log: app.log, store: options.store, durationBuckets: config.metrics.durationBuckets });
  // User-level MCP servers (CONTRACT §3): registrations in the shared store, egress-checked on PUT and on connect.
  const egress = { allow: config.egress.allow, resolve: options.resolve };
  // Per-tenant settings come from the live snapshot (a tenant added or changed by reload), never from `config`.
  const registrations = createUserMcpRegistrations({ store: governance.store, egress, maxServers: (tenant) => gateway.tenant(tenant)?.config.userMcp.maxServers ?? 0 });
  const userProvider = createUserMcpProvider({ registrations, egress });
  // MCP definition pins in the state store: with Redis, an operator's accept on one replica releases the tool on all.
  const pins = createPinRegistry({ log: app.log, metrics: metrics.registry, store: governance.store });
  const gateway = await Gateway.create(config, {
    policyDeps: governance.policyDeps,
    builtinPolicies,
    log: app.log,
    metrics,
    agent,
    env,
    providerSpecs: providerSpecsFor({ log: app.log, agent, metrics, resolve: options.resolve, circuits: governance.policyDeps.circuits, pins }),
    userProvider,
  });
  let authenticator = await createAuthenticator(config.auth, { jwks: options.jwks });
  // A reload swaps keys and JWT settings too; the new authenticator starts with an empty token cache.
  const reloadConfig = async (): Promise<ReloadOutcome> => {
    let next: GatewayConfig;
    let nextAuthenticator;
    try {
      next = options.loadConfig ? await options.loadConfig() : gateway.config;
      nextAuthenticator = await createAuthenticator(next.auth, { jwks: options.jwks });
    } catch (error) {
      metrics.reloaded(false);
      throw error;
    }
    const { changed } = await gateway.reload(next);
    authenticator = nextAuthenticator;
    // Start-up settings are compared with the config the process started with: they still run on it.
    return { changed, restartRequired: settingsNeedingRestart(config, next) };
  };

  app.addHook('onClose', async () => {
    pins.close();
    await agent.close();
  });

  const drain = new Drain();
  metrics.watchReady(() => readinessOf(gateway.status(), drain.draining) === 'ready');
  // Whoever closes the app (SIGTERM through src/server.ts, a test), new requests are refused from then on.
  app.addHook('preClose', (done) => {
    drain.close();
    done();
  });
  // Slow clients: connections per address, the time a body may take, and slots taken only after the body.
  limitConnectionsPerAddress(app.server, config.server.maxConnectionsPerAddress);
  installBodyDeadline(app, () => gateway.config.server.bodyTimeoutMs);
  acceptEmptyJsonBody(app);
  const admission = installAdmission(
    app,
    {
      maxInFlight: () => gateway.config.server.maxInFlight,
      maxPublicInFlight: () => gateway.config.server.maxPublicInFlight,
      tenantMaxInFlight: (tenant) => gateway.tenant(tenant)?.config.limits.maxInFlight,
      refusing: () => drain.refusing,
      callsCancelled: () => drain.cancelled,
    },
    metrics,
  );

  app.setErrorHandler((raised: FastifyError, request, reply) => {
    reply.header('x-request-id', request.id);
    // The gateway found no tenant (removed by a reload after the request was authenticated): the same
    // answer as for a token of a tenant that is not configured.
    const error: FastifyError = raised instanceof UnknownTenantError ? new errors.TG_UNKNOWN_TENANT() : raised;
    if (bodyPending(request.raw)) reply.header('connection', 'close');
    const status = error.statusCode ?? 500;
    if (status >= 500 && !error.code?.startsWith('TG_')) {
      request.log.error({ err: error }, 'request failed');
      return reply.code(500).send({ statusCode: 500, code: 'TG_INTERNAL', error: 'Internal Server Error', message: 'internal server error' });
    }
    const code = error.code?.startsWith('TG_') ? error.code : mapFastifyCode(error, status);
    if (status === 503 && !reply.hasHeader('retry-after')) reply.header('retry-after', '1');
    return reply.code(status).send({ statusCode: status, code, error: reasonPhrase(status), message: error.message });
  });
  app.setNotFoundHandler((request, reply) => {
    // Routes set it in their admission hook; a request that matched no route gets it here.
    reply.header('x-request-id', request.id);
    admission.countUnmatched(request, 404);
    reply.code(404).send({ statusCode: 404, code: 'TG_NOT_FOUND', error: 'Not Found', message: `no route ${request.method} ${request.url.split('?')[0]}` });
  });

  for (const schema of sharedSchemas) app.addSchema(schema);
  await app.register(swagger, { openapi: openapiDocument, refResolver: { buildLocalReference: (json, _base, _fragment, index) => String(json.$id ?? `def-${index}`) } });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: false }, staticCSP: true });

  await app.register(governancePlugin, { governance });
  const metricsServer = config.metrics.enabled ? createMetricsServer(metrics.registry) : undefined;
  await app.register(gatewayPlugin, { gateway, metrics, metricsServer, reloadConfig, drain });
  const runtimeKeys = createRuntimeKeys({ store: governance.store, maxPerTenant: () => gateway.config.admin.maxKeysPerTenant });
  await app.register(authPlugin, { authenticator: () => authenticator, gateway, runtimeKeys });
  await app.register(healthRoutes);
  await app.register(oauthMetadataRoutes);
  await app.register(metricsRoutes);
  await app.register(docsRoutes);
  await app.register(toolsRoutes);
  await app.register(executeRoutes);
  await app.register(adminRoutes);
  await app.register(adminKeysRoutes, { runtimeKeys });
  await app.register(adminActivityRoutes);
  await app.register(adminToolsRoutes);
  await app.register(meRoutes);
  if (config.console.enabled) await app.register(consoleRoutes, { root: options.consoleRoot });
  await app.register(approvalsRoutes);
  await app.register(userRoutes, { registrations, provider: userProvider });
  await app.register(mcpRoutes);
  return app;
}

function mapFastifyCode(error: FastifyError, status: number): string {
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || status === 413) return 'TG_PAYLOAD_TOO_LARGE';
  if (status === 404) return 'TG_NOT_FOUND';
  if (status === 415) return 'TG_UNSUPPORTED_MEDIA_TYPE';
  return 'TG_BAD_REQUEST';
}

const REASONS: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 408: 'Request Timeout', 409: 'Conflict',
  413: 'Payload Too Large', 415: 'Unsupported Media Type', 429: 'Too Many Requests', 503: 'Service Unavailable',
};
function reasonPhrase(status: number): string {
  return REASONS[status] ?? 'Error';
}
