// First: hold one tick object before the rest of the graph loads and collects (src/runtime/keep-tick-shape.ts).
import './runtime/keep-tick-shape.js';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { JSONWebKeySet } from 'jose';
import { builtinPolicies } from '../policies/index.js';
import { createAuthenticator } from './auth/authenticator.js';
import { createCodeModeSource } from './code-mode/source.js';
import { createLiveAuthenticator } from './auth/live-authenticator.js';
import type { GatewayConfig, TenantConfig } from './config/types.js';
import { createHttpAgent } from './egress/http-client.js';
import { Gateway } from './gateway.js';
import { Drain } from './http/drain.js';
import { AccessLogController, createLogger } from './observability/logger.js';
import { stdoutDestination } from './observability/stdout.js';
import { createMetrics } from './observability/gateway-metrics.js';
import { createMetricsServer } from './observability/metrics-server.js';
import { traceSettings } from './observability/trace-settings.js';
import { startTracing } from './observability/tracing.js';
import { admissionPlugin } from './plugins/admission.js';
import { authPlugin } from './plugins/auth.js';
import { bodyDeadlinePlugin } from './plugins/body-deadline.js';
import { connectionLimitPlugin } from './plugins/connection-limit.js';
import { errorHandlerPlugin } from './plugins/error-handler.js';
import { gatewayPlugin } from './plugins/gateway.js';
import { approvalsPlugin } from './plugins/approvals.js';
import { auditPlugin } from './plugins/audit.js';
import { identityPlugin } from './plugins/identity.js';
import { liveConfigPlugin } from './plugins/live-config.js';
import { policyDepsPlugin } from './plugins/policy-deps.js';
import { lazySerializers } from './http/lazy-serializers.js';
import { storePlugin } from './plugins/store.js';
import { tasksPlugin } from './plugins/tasks.js';
import { userServersPlugin } from './plugins/user-servers.js';
import { jsonBodyPlugin } from './plugins/json-body.js';
import { openapiPlugin } from './plugins/openapi.js';
import { requestIdOf } from './plugins/request-id.js';
import { tracingPlugin } from './plugins/tracing.js';
import { createPinRegistry } from './mcp/client/pinning.js';
import { providerSpecsFor } from './providers.js';
import { createConfigReload } from './snapshot/reload.js';
import { adminRoutes } from '../routes/admin.js';
import { adminActivityRoutes } from '../routes/admin-activity.js';
import { adminKeysRoutes } from '../routes/admin-keys.js';
import { adminToolsRoutes } from '../routes/admin-tools.js';
import { adminCedarRoutes } from '../routes/admin-cedar.js';
import { adminTenantsRoutes } from '../routes/admin-tenants.js';
import { consoleRoutes } from '../routes/console.js';
import { meRoutes } from '../routes/me.js';
import { usageRoutes } from '../routes/usage.js';
import { type ApiKeyLive, createRuntimeKeys } from './admin/api-keys.js';
import { approvalsRoutes } from '../routes/approvals.js';
import { docsRoutes } from '../routes/docs.js';
import { executeRoutes } from '../routes/execute.js';
import { tasksRoutes } from '../routes/tasks.js';
import { oauthMetadataRoutes } from '../routes/oauth-metadata.js';
import { healthRoutes } from '../routes/health.js';
import { mcpRoutes } from '../routes/mcp.js';
import { metricsRoutes } from '../routes/metrics.js';
import { toolsRoutes } from '../routes/tools.js';
import { resourcesRoutes } from '../routes/resources.js';
import { userRoutes } from '../routes/users.js';
import type { Resolve } from './egress/check-egress.js';
import type { StateStore } from './store/types.js';
import { DEFAULT_USER_CATALOG_LIMITS } from './mcp/user/catalog-limits.js';
import { createUserMcpProvider } from './mcp/user/user-mcp-provider.js';
import { userServerTarget } from './mcp/user/registration-auth.js';
import { clientMetadataDocumentRoutes, connectionRoutes } from '../routes/connections.js';
import { createTenantRecords } from './tenants/records.js';
import { createTenantService } from './tenants/service.js';
import { storedTenantSource } from './tenants/stored-source.js';
import { tenantIdView } from './config/compact-tenants.js';
import { loadSheddingPlugin } from './plugins/load-shedding.js';

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
  /** Every response serializer built at start, as Fastify does by default (src/http/lazy-serializers.ts builds each on
   * its first response): a test then sees a response schema that does not compile as a failed start. */
  eagerSerializers?: boolean;
}

/** Builds the gateway as an un-listened Fastify instance (tests use inject; src/server.ts listens). */
export async function buildServer(config: GatewayConfig, options: BuildOptions = {}): Promise<FastifyInstance> {
  // By default logs go to the stdout destination the `stdout` audit sink shares (src/observability/stdout.ts).
  const loggerInstance = options.loggerInstance ?? (options.logger === undefined ? createLogger(config, stdoutDestination()) : undefined);
  const app: FastifyInstance = Fastify({
    ...(loggerInstance ? { loggerInstance } : { logger: options.logger }),
    bodyLimit: config.server.bodyLimit,
    trustProxy: config.server.trustProxy,
    requestIdHeader: false,
    logController: new AccessLogController({ requestIdLogLabel: 'requestId', quietReads: config.logging.quietReads }),
    genReqId: requestIdOf,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // Requests arriving while the replica drains answer 503 + Retry-After with a TG_ code (src/plugins/admission.ts).
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, useDefaults: true, allErrors: false } },
    ...(options.eagerSerializers ? {} : { schemaController: { compilersFactory: { buildSerializer: lazySerializers() } } }),
  });

  const env = options.env ?? process.env;
  // Off unless configured (telemetry block or OTEL_* variables): then the SDK is never even imported.
  // Checked here, started just before the plugins: a failure in between leaves no SDK running.
  const traces = traceSettings(config.telemetry, env);
  const metrics = createMetrics({ defaultMetrics: options.defaultMetrics, durationBuckets: config.metrics.durationBuckets, maxTenantSeries: config.metrics.maxTenantSeries });
  const agent = createHttpAgent();
  const egress = { allow: config.egress.allow, resolve: options.resolve };
  const { registry } = metrics;

  // Services as plugins: each names what it needs (`dependencies`) and closes its own resources; Fastify
  // closes them in reverse, so the store outlives everything that writes to it.
  // Tracing first: its onRequest hook, which times the server span, runs before any other.
  await app.register(tracingPlugin, { tracing: await startTracing(traces) });
  await app.register(storePlugin, { config: config.store, registry, store: options.store });
  await app.register(auditPlugin, { config: config.audit, recent: config.admin.auditRecent, registry });
  await app.register(approvalsPlugin, { registry });
  await app.register(tasksPlugin);
  await app.register(policyDepsPlugin, { config, registry });
  await app.register(liveConfigPlugin, { config });
  await app.register(userServersPlugin, { egress });
  await app.register(identityPlugin, { registry, egress, resolve: options.resolve });

  const { identity, liveConfig, store } = app;
  const { registrations } = app.userServers;
  const userProvider = createUserMcpProvider({
    registrations,
    egress,
    credentialsFor: (owner, registration) => {
      const target = userServerTarget(owner, registration, liveConfig.vault());
      return target?.userServer ? identity.credentialsFor(target.service, target.auth, target.userServer) : undefined;
    },
    // The tenant's view is rebuilt on reload, so its config object (and so the limits' identity) changes only then.
    limitsFor: (tenant) => liveConfig.tenant(tenant)?.userMcp ?? DEFAULT_USER_CATALOG_LIMITS,
  });
  // MCP definition pins in the state store: with Redis, an operator's accept on one replica releases the tool on all.
  const pins = createPinRegistry({ log: app.log, metrics: registry, store });
  // Tenants as data (docs/architecture.md#tenants-compiled-on-first-use): kept in the store, compiled on first use.
  const tenantRecords = createTenantRecords(store, app.bus);
  const gateway = await Gateway.create(config, {
    policyDeps: app.policyDeps,
    builtinPolicies,
    builtinPoliciesModule: new URL('../policies/index.js', import.meta.url).href,
    log: app.log,
    metrics,
    env,
    providerSpecs: providerSpecsFor({ log: app.log, agent, metrics, resolve: options.resolve, circuits: app.policyDeps.circuits, pins, credentialsFor: identity.credentialsFor }),
    userProvider,
    storedTenants: storedTenantSource(tenantRecords, app.log),
    codeMode: createCodeModeSource(metrics.registry),
  });
  // From here on the services built before it read the gateway's live config (src/plugins/live-config.ts).
  liveConfig.serve(gateway);
  // A tenant changed on any replica: this one compiles it again on its next request.
  const stopTenantChanges = tenantRecords.onChange((id) => gateway.invalidateTenant(id));
  const tenants = createTenantService({
    records: tenantRecords,
    config: () => gateway.config,
    check: (id, tenant) => gateway.checkTenant(id, tenant),
    invalidate: (id) => gateway.invalidateTenant(id),
    audit: app.audit,
    log: app.log,
  });
  // Counters of the configured tenants (when they all fit under metrics.maxTenantSeries) and the catalog's tools
  // start at 0, also for ones a reload adds.
  const startKnownAtZero = (): void => {
    const known = tenantIdView(gateway.config.tenants);
    metrics.knownTenants(known);
    metrics.knownTools(gateway.current().catalog.tools);
    app.approvalMetrics.knownTenants(known);
    app.policyMetrics.knownTenants(known);
  };
  startKnownAtZero();
  gateway.onChange(startKnownAtZero);
  const authenticator = await createLiveAuthenticator(config.auth, { jwks: options.jwks });
  const reloadConfig = createConfigReload({
    started: config,
    load: options.loadConfig,
    live: gateway,
    metrics,
    // A reload swaps keys and JWT settings too; the new authenticator starts with an empty token cache.
    prepare: (next) => authenticator.prepare(next.auth),
  });

  app.addHook('onClose', async () => {
    stopTenantChanges();
    pins.close();
    await agent.close();
  });
  const metricsServer = config.metrics.enabled ? createMetricsServer(registry) : undefined;
  // A config key that minted runtime keys must still be in the live config, with the same secret, tenant and
  // user, and still an admin: rotating or removing a leaked admin key also ends the keys minted with it.
  const apiKeyLive: ApiKeyLive = (tenant, issuer) =>
    gateway.config.auth.apiKeys.some(
      (key) => key.id === issuer.id && key.tenant === tenant && key.user === issuer.user && key.sha256.toLowerCase() === issuer.sha256 && key.roles.includes('admin'),
    );
  const runtimeKeys = createRuntimeKeys({ store, maxPerTenant: () => gateway.config.admin.maxKeysPerTenant, apiKeyLive });

  await app.register(gatewayPlugin, { gateway, metrics, metricsServer, reloadConfig, drain: new Drain() });
  // Before authentication: a shed request costs no token check and no body.
  await app.register(loadSheddingPlugin);
  await app.register(authPlugin, { authenticator: authenticator.current, runtimeKeys });
  // Slow clients: connections per address, the time a body may take, and slots taken only after the body.
  await app.register(connectionLimitPlugin);
  await app.register(bodyDeadlinePlugin);
  await app.register(jsonBodyPlugin);
  await app.register(admissionPlugin);
  await app.register(errorHandlerPlugin);
  await app.register(openapiPlugin);

  // Routes, in the order of the OpenAPI document's paths.
  await app.register(healthRoutes);
  await app.register(oauthMetadataRoutes);
  await app.register(metricsRoutes);
  await app.register(docsRoutes);
  await app.register(toolsRoutes);
  await app.register(executeRoutes);
  await app.register(tasksRoutes);
  await app.register(resourcesRoutes);
  await app.register(adminRoutes);
  await app.register(adminTenantsRoutes, { tenants });
  await app.register(adminKeysRoutes, { runtimeKeys });
  await app.register(adminActivityRoutes);
  await app.register(adminToolsRoutes);
  await app.register(adminCedarRoutes);
  await app.register(meRoutes);
  await app.register(usageRoutes);
  if (config.console.enabled) await app.register(consoleRoutes, { root: options.consoleRoot });
  await app.register(approvalsRoutes);
  await app.register(userRoutes, { registrations, provider: userProvider });
  await app.register(connectionRoutes, { identity });
  await app.register(clientMetadataDocumentRoutes);
  await app.register(mcpRoutes);
  return app;
}
