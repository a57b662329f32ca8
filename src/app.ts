import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { JSONWebKeySet } from 'jose';
import { builtinPolicies } from '../policies/index.js';
import { createAuthenticator } from './auth/authenticator.js';
import type { GatewayConfig, TenantConfig } from './config/types.js';
import { createHttpAgent } from './egress/http-client.js';
import { Gateway } from './gateway.js';
import { createGovernance } from './governance.js';
import { Drain } from './http/drain.js';
import { AccessLogController, createLogger } from './observability/logger.js';
import { stdoutDestination } from './observability/stdout.js';
import { createMetrics } from './observability/metrics.js';
import { createMetricsServer } from './observability/metrics-server.js';
import { traceSettings } from './observability/trace-settings.js';
import { startTracing } from './observability/tracing.js';
import { admissionPlugin } from './plugins/admission.js';
import { authPlugin } from './plugins/auth.js';
import { bodyDeadlinePlugin } from './plugins/body-deadline.js';
import { connectionLimitPlugin } from './plugins/connection-limit.js';
import { errorHandlerPlugin } from './plugins/error-handler.js';
import { gatewayPlugin } from './plugins/gateway.js';
import { governancePlugin } from './plugins/governance.js';
import { jsonBodyPlugin } from './plugins/json-body.js';
import { openapiPlugin } from './plugins/openapi.js';
import { tracingPlugin } from './plugins/tracing.js';
import { createPinRegistry } from './mcp/client/pinning.js';
import { providerSpecsFor } from './providers.js';
import { createConfigReload } from './snapshot/reload.js';
import { adminRoutes } from '../routes/admin.js';
import { adminActivityRoutes } from '../routes/admin-activity.js';
import { adminKeysRoutes } from '../routes/admin-keys.js';
import { adminToolsRoutes } from '../routes/admin-tools.js';
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
import { createUserMcpProvider } from './mcp/user/provider.js';
import { createUserMcpRegistrations } from './mcp/user/registrations.js';
import { createUpstreamIdentity } from './upstream-auth/identity.js';
import { userServerTarget } from './mcp/user/registration-auth.js';
import { userServiceKey } from './registry/user-names.js';
import { clientMetadataDocumentRoutes, connectionRoutes } from '../routes/connections.js';
import { createTenantRecords } from './tenants/records.js';
import { createTenantService } from './tenants/service.js';
import { storedTenantSource } from './tenants/stored-source.js';
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
    logController: new AccessLogController({ requestIdLogLabel: 'requestId', quietReads: config.logging.quietReads }),
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // Requests arriving while the replica drains answer 503 + Retry-After with a TG_ code (src/plugins/admission.ts).
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, useDefaults: true, allErrors: false } },
  });

  const env = options.env ?? process.env;
  // Off unless configured (telemetry block or OTEL_* variables): then the SDK is never even imported.
  // Checked here, started just before the plugins: a failure in between leaves no SDK running.
  const traces = traceSettings(config.telemetry, env);
  const metrics = createMetrics({ defaultMetrics: options.defaultMetrics, durationBuckets: config.metrics.durationBuckets, maxTenantSeries: config.metrics.maxTenantSeries });
  const agent = createHttpAgent();
  // Store (options.store, else `store.kind` from config), approvals, audit sink and policy metrics.
  const governance = createGovernance(config, { registry: metrics.registry, log: app.log, store: options.store, durationBuckets: config.metrics.durationBuckets });
  // A store that can never connect (a Redis certificate that is not trusted) stops start-up with the reason;
  // one that is merely down does not (docs/architecture.md#state-store).
  await governance.store.verifyConnection?.().catch(async (error: unknown) => {
    await governance.close();
    throw error;
  });
  // User-level MCP servers (docs/security-model.md#user-mcp-servers): registrations in the shared store, egress-checked on PUT and on connect.
  const egress = { allow: config.egress.allow, resolve: options.resolve };
  // Per-tenant settings come from the live snapshot (a tenant added or changed by reload), never from `config`.
  // A user's `auth` on their own server (docs/security-model.md#user-mcp-servers): sealed by the identity's vault.
  const registrations = createUserMcpRegistrations({
    store: governance.store,
    egress,
    maxServers: (tenant) => gateway.tenant(tenant)?.config.userMcp.maxServers ?? 0,
    auth: { vault: () => identity.vault(), connectable: () => gateway.config.server.publicUrl !== undefined },
    onAuthChanged: (tenant, sub, serviceId) => identity.connections.forget({ tenant, user: sub }, userServiceKey(sub, serviceId)),
  });
  const userProvider = createUserMcpProvider({
    registrations,
    egress,
    credentialsFor: (owner, registration) => {
      const target = userServerTarget(owner, registration, identity.vault());
      return target?.userServer ? identity.credentialsFor(target.service, target.auth, target.userServer) : undefined;
    },
    // The tenant's view is rebuilt on reload, so its config object (and so the limits' identity) changes only then.
    limitsFor: (tenant) => gateway.tenant(tenant)?.config.userMcp ?? DEFAULT_USER_CATALOG_LIMITS,
  });
  // MCP definition pins in the state store: with Redis, an operator's accept on one replica releases the tool on all.
  const pins = createPinRegistry({ log: app.log, metrics: metrics.registry, store: governance.store });
  // Upstream identity (docs/security-model.md#upstream-identity): per-call OAuth credentials, connections in the store.
  // The live config once the gateway exists; the start-up config while it is being built (listing a service's
  // tools may already need its credentials, and discovery reads the egress policy).
  let liveConfig = (): GatewayConfig => config;
  // Whether a tenant's pool can hold a tool of a service: answered once the gateway (its catalog) exists.
  let reachesTools = (_tenant: string, _service: string): boolean => false;
  // A tenant's configuration: the file's while the gateway is being built, then the compiled tenant's (file or
  // store; a request's tenant is compiled by its authentication).
  let tenantConfig = (tenant: string): TenantConfig | undefined => (Object.hasOwn(config.tenants, tenant) ? config.tenants[tenant] : undefined);
  const identity = createUpstreamIdentity({
    store: governance.store,
    config: () => liveConfig(),
    metrics: metrics.registry,
    resolve: options.resolve,
    reachesTools: (tenant, service) => reachesTools(tenant, service),
    tenantConfig: (tenant) => tenantConfig(tenant),
    userEgress: egress,
    // The user's own servers with userOAuth take connections too, named by their service key.
    userTargets: async (owner) =>
      (await registrations.list(owner.tenant, owner.user)).flatMap((registration) => {
        if (registration.auth?.type !== 'userOAuth') return [];
        try {
          const target = userServerTarget(owner, registration, identity.vault());
          return target ? [target] : [];
        } catch {
          // A secret sealed with a key since removed: the server takes no connection until registered again.
          return [];
        }
      }),
  });
  // Tenants as data (docs/architecture.md#tenants-compiled-on-first-use): kept in the store, compiled on first use.
  const tenantRecords = createTenantRecords(governance.store, governance.bus);
  const gateway = await Gateway.create(config, {
    policyDeps: governance.policyDeps,
    builtinPolicies,
    log: app.log,
    metrics,
    agent,
    env,
    providerSpecs: providerSpecsFor({ log: app.log, agent, metrics, resolve: options.resolve, circuits: governance.policyDeps.circuits, pins, credentialsFor: identity.credentialsFor }),
    userProvider,
    storedTenants: storedTenantSource(tenantRecords, app.log),
  });
  // A tenant changed on any replica: this one compiles it again on its next request.
  const stopTenantChanges = tenantRecords.onChange((id) => gateway.invalidateTenant(id));
  const tenants = createTenantService({
    records: tenantRecords,
    config: () => gateway.config,
    check: (id, tenant) => gateway.checkTenant(id, tenant),
    invalidate: (id) => gateway.invalidateTenant(id),
    audit: governance.audit,
    log: app.log,
  });
  liveConfig = () => gateway.config;
  tenantConfig = (tenant) => gateway.tenant(tenant)?.config;
  reachesTools = (tenant, service) => {
    const view = gateway.tenant(tenant);
    return view !== undefined && gateway.current().catalog.tools.some((tool) => tool.service === service && view.reaches(tool));
  };
  // Counters of the configured tenants and the catalog's tools start at 0, also for ones a reload adds.
  const startKnownAtZero = (): void => {
    const tenants = Object.keys(gateway.config.tenants);
    metrics.knownTenants(tenants);
    metrics.knownTools(gateway.current().catalog.tools);
    governance.knownTenants(tenants);
  };
  startKnownAtZero();
  gateway.onChange(startKnownAtZero);
  let authenticator = await createAuthenticator(config.auth, { jwks: options.jwks });
  const reloadConfig = createConfigReload({
    started: config,
    load: options.loadConfig,
    live: gateway,
    metrics,
    // A reload swaps keys and JWT settings too; the new authenticator starts with an empty token cache.
    prepare: async (next) => {
      const nextAuthenticator = await createAuthenticator(next.auth, { jwks: options.jwks });
      return () => {
        authenticator = nextAuthenticator;
      };
    },
  });

  app.addHook('onClose', async () => {
    stopTenantChanges();
    pins.close();
    await agent.close();
  });
  const metricsServer = config.metrics.enabled ? createMetricsServer(metrics.registry) : undefined;
  // A config key that minted runtime keys must still be in the live config, with the same secret, tenant and
  // user, and still an admin: rotating or removing a leaked admin key also ends the keys minted with it.
  const apiKeyLive: ApiKeyLive = (tenant, issuer) =>
    gateway.config.auth.apiKeys.some(
      (key) => key.id === issuer.id && key.tenant === tenant && key.user === issuer.user && key.sha256.toLowerCase() === issuer.sha256 && key.roles.includes('admin'),
    );
  const runtimeKeys = createRuntimeKeys({ store: governance.store, maxPerTenant: () => gateway.config.admin.maxKeysPerTenant, apiKeyLive });

  // Each plugin names what it needs (`dependencies`); the order below only has to satisfy them.
  // Tracing first: its onRequest hook, which times the server span, runs before any other.
  await app.register(tracingPlugin, { tracing: await startTracing(traces) });
  await app.register(governancePlugin, { governance });
  await app.register(gatewayPlugin, { gateway, metrics, metricsServer, reloadConfig, drain: new Drain() });
  // Before authentication: a shed request costs no token check and no body.
  await app.register(loadSheddingPlugin);
  await app.register(authPlugin, { authenticator: () => authenticator, runtimeKeys });
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
