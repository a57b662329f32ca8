import type { Agent } from 'undici';
import { createBuiltinProvider } from './builtins/index.js';
import type { GatewayConfig } from './config/types.js';
import { createFunctionProvider } from './function-tools/function-provider.js';
import type { ProviderSpec } from './snapshot/snapshot.js';
import { createGlobalMcpProvider } from './mcp/client/global-provider.js';
import { createLocalMcpProvider } from './mcp/client/local-provider.js';
import { createPinRegistry, type PinRegistry } from './mcp/client/pinning.js';
import type { GatewayMetrics } from './observability/gateway-metrics.js';
import type { CircuitRegistry } from './pipeline/circuit-state.js';
import { createOpenApiProvider } from './openapi-tools/openapi-provider.js';
import type { DocumentCache } from './openapi-tools/document-source.js';
import { createRagProvider } from './rag/rag-provider.js';
import type { Resolve } from './egress/check-egress.js';
import type { Logger } from './call/types.js';
import type { ServiceCredentials } from './call/upstream-credential.js';
import type { UpstreamAuthConfig } from './config/types.js';

export interface ProviderDeps {
  log: Logger;
  agent: Agent;
  metrics?: GatewayMetrics;
  /** DNS resolution for the egress check of OpenAPI documents and calls (tests inject one). */
  resolve?: Resolve;
  /** The circuit breakers: an MCP upstream that reconnects moves its service's breaker to half-open. */
  circuits?: CircuitRegistry;
  /** Definition pins in the state store (src/mcp/client/pinning.ts), shared by replicas; one in memory when absent. */
  pins?: PinRegistry;
  /** Upstream OAuth credentials of services with an `auth` object (src/upstream-auth/identity.ts). */
  credentialsFor?: (service: string, auth: UpstreamAuthConfig) => ServiceCredentials;
}

/**
 * Every tool source the config asks for. Keys are the config each provider was built from, so a
 * reload reuses providers (and their upstream connections) whose part of the config did not change.
 */
export function providerSpecsFor(deps: ProviderDeps): (config: GatewayConfig) => ProviderSpec[] {
  // Pins outlive reloads: a reload must not re-trust a definition that changed under an admin's nose.
  const pins = deps.pins ?? createPinRegistry({ log: deps.log, metrics: deps.metrics?.registry });
  const mcpDeps = {
    log: deps.log,
    pins,
    ...(deps.metrics ? { metrics: deps.metrics.registry } : {}),
    onShadowed: () => deps.metrics?.toolShadowed.inc({ winner: 'global-mcp', loser: 'global-mcp' }),
    onUpstreamReady: (service: string) => deps.circuits?.upstreamRecovered(service),
    ...(deps.credentialsFor ? { credentialsFor: deps.credentialsFor } : {}),
  };
  // Fetched OpenAPI documents outlive reloads, so a reload revalidates (If-None-Match) instead of re-downloading.
  const documents: DocumentCache = new Map();
  return (config) => [
    {
      // One provider for every tenant; the registry enables built-ins per tenant (`tenants.<t>.builtins`).
      // Its close() reaps every background process, on shutdown and when a reload changes `builtins`.
      key: `builtin:${JSON.stringify(config.builtins)}`,
      create: () => createBuiltinProvider(config.builtins, { log: deps.log }),
    },
    {
      // The key changes on every reload (Date.now()), so a reload re-imports every module: an edited one is picked up.
      key: `function:${JSON.stringify(config.functions)}:${Date.now()}`,
      create: () => createFunctionProvider(config.functions, deps.agent),
    },
    {
      // A reload always rebuilds the embedded indexes, so edited knowledge-base files are picked up.
      key: `rag:${JSON.stringify(config.rag)}:${Date.now()}`,
      create: () => createRagProvider(config.rag, { dispatcher: deps.agent }),
    },
    {
      // Always rebuilt on reload: documents (files or URLs) are re-read.
      key: `openapi:${JSON.stringify([config.openapi, config.egress])}:${Date.now()}`,
      create: () =>
        createOpenApiProvider(config.openapi, {
          egress: { allow: config.egress.allow, resolve: deps.resolve },
          log: deps.log,
          documents,
          ...(deps.credentialsFor ? { credentialsFor: deps.credentialsFor } : {}),
        }),
    },
    { key: `local-mcp:${JSON.stringify(config.mcp.local)}`, create: () => createLocalMcpProvider(config.mcp.local, mcpDeps) },
    { key: `global-mcp:${JSON.stringify(config.mcp.global)}`, create: () => createGlobalMcpProvider(config.mcp.global, mcpDeps) },
  ];
}
