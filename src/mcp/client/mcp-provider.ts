// The part local and global MCP providers share: a set of upstream clients in config order, pinning,
// naming with first-wins collisions, and a cached tool list rebuilt whenever an upstream changes.
import type { FetchLike } from '@modelcontextprotocol/client';
import type { Tool as McpTool } from '@modelcontextprotocol/client';
import type { Registry } from 'prom-client';
import type { ToolProvider, UpstreamStatus } from '../../registry/tool-provider.js';
import type { Logger, Tool, ToolSourceKind, ToolSpec } from '../../call/types.js';
import type { Principal } from '../../call/principal.js';
import type { ServiceCredentials } from '../../call/upstream-credential.js';
import type { BackoffOptions } from '../../shared/backoff.js';
import { toolFromMcp } from './mcp-tool.js';
import { METRICS, sharedGauge } from '../../observability/metric-table.js';
import { createNameMap } from './naming.js';
import { createPinRegistry, type HeldTool, type PinRegistry } from './pinning.js';
import { createUpstreamClient, type UpstreamClient } from './upstream-client.js';
import { UPSTREAM_ERAS } from './upstream-era.js';
import type { UpstreamTransportConfig } from './upstream-transport.js';
import { sessionCredentialFetch } from './upstream-fetch.js';

export interface McpProviderDeps {
  log: Logger;
  metrics?: Registry;
  /** Share one across providers so admins accept tools in one place. */
  pins?: PinRegistry;
  /** Called once per (name, loser) when a later service's tool is hidden by an earlier one. */
  onShadowed?: (name: string, winner: string, loser: string) => void;
  backoff?: Partial<BackoffOptions>;
  connectTimeoutMs?: number;
  /** Called each time an upstream becomes ready (connected or reconnected and listed): a health signal. */
  onUpstreamReady?: (service: string) => void;
}

/** One upstream service as the shared provider sees it. */
export interface McpServiceSpec {
  service: string;
  config: UpstreamTransportConfig;
  required: boolean;
  lazy: boolean;
  pin: boolean;
  /** The model-visible name of an upstream tool (already legal and ≤ 64 chars). */
  exposedName: (upstream: string) => string;
  headersFor?: (principal: Principal) => Record<string, string>;
  /** The service's OAuth credentials (`auth`), per call and for the session. */
  credentials?: ServiceCredentials;
  extra?: (tool: McpTool) => Partial<ToolSpec>;
}

export interface HeldToolInfo extends HeldTool {
  name: string;
}

/** A ToolProvider plus its admin surface (`/v1/admin/upstreams`, tool acceptance). */
export interface McpProvider extends ToolProvider {
  /** Accepts the changed definition of a held tool by its exposed name (held here or on another replica); undefined when nothing is held. */
  accept(name: string): Promise<HeldToolInfo | undefined>;
  heldTools(): HeldToolInfo[];
  status(): UpstreamStatus[];
}

export function createMcpProvider(kind: ToolSourceKind, specs: McpServiceSpec[], deps: McpProviderDeps): McpProvider {
  const log = deps.log.child({ provider: kind });
  const pins = deps.pins ?? createPinRegistry({ log: deps.log, metrics: deps.metrics });
  const upGauge = sharedGauge(deps.metrics, METRICS.upstreamUp);
  const eraGauge = sharedGauge(deps.metrics, METRICS.upstreamEra);
  const names = createNameMap();
  const shadowedOnce = new Set<string>();
  const listeners: Array<() => void> = [];
  let cached: readonly Tool[] = [];

  const clients: Array<{ spec: McpServiceSpec; client: UpstreamClient }> = specs.map((spec) => ({
    spec,
    client: createUpstreamClient({
      service: spec.service,
      kind,
      config: spec.config,
      log: deps.log,
      required: spec.required,
      ...(deps.backoff ? { backoff: deps.backoff } : {}),
      ...(deps.connectTimeoutMs ? { connectTimeoutMs: deps.connectTimeoutMs } : {}),
      ...(spec.credentials ? { fetch: sessionCredentialFetch(spec.credentials) } : {}),
    }),
  }));

  function rebuild(): void {
    const next: Tool[] = [];
    const owner = new Map<string, string>();
    names.clear();
    for (const { spec, client } of clients) {
      const status = client.status();
      upGauge.set({ service: spec.service }, status.state === 'ready' ? 1 : 0);
      for (const era of UPSTREAM_ERAS) eraGauge.set({ service: spec.service, era }, status.state === 'ready' && status.detail?.era === era ? 1 : 0);
      const listed = client.tools();
      for (const tool of listed) names.set(spec.exposedName(tool.name), spec.service, tool.name);
      for (const tool of pins.filter(spec.service, listed, { pin: spec.pin })) {
        const name = spec.exposedName(tool.name);
        const winner = owner.get(name);
        if (winner !== undefined) {
          const key = JSON.stringify([name, spec.service]);
          if (!shadowedOnce.has(key)) {
            shadowedOnce.add(key);
            log.warn({ tool: name, winner, loser: spec.service }, 'MCP tool shadowed by a service listed earlier');
            deps.onShadowed?.(name, winner, spec.service);
          }
          continue;
        }
        owner.set(name, spec.service);
        names.set(name, spec.service, tool.name);
        next.push(
          toolFromMcp(tool, {
            name,
            source: kind,
            service: spec.service,
            client,
            isHeld: () => spec.pin && pins.isHeld(spec.service, tool.name),
            ...(spec.headersFor ? { headersFor: spec.headersFor } : {}),
            ...(spec.credentials ? { credentials: spec.credentials } : {}),
            ...(spec.extra ? { extra: spec.extra(tool) } : {}),
          }),
        );
      }
    }
    cached = next;
    for (const listener of listeners) listener();
  }

  for (const { spec, client } of clients) {
    let ready = false;
    client.onChange(() => {
      const now = client.status().state === 'ready';
      if (now && !ready) deps.onUpstreamReady?.(spec.service);
      ready = now;
      rebuild();
    });
  }
  // A pin loaded from the shared store, or accepted on another replica, changes what this provider lists.
  const stopPinWatch = pins.onChange(rebuild);

  return {
    kind,
    tools: () => cached,
    async start() {
      await Promise.all(clients.map(({ spec, client }) => (spec.lazy ? void client.start() : client.start())));
      // The first listing is decided against the shared pins (a fresh replica never trusts a changed definition).
      await Promise.all(clients.filter(({ spec }) => spec.pin).map(({ spec, client }) => pins.reconcile(spec.service, client.tools())));
      rebuild();
    },
    async close() {
      stopPinWatch();
      await Promise.all(clients.map(({ client }) => client.close()));
    },
    onChange(listener) {
      listeners.push(listener);
    },
    mcpServices() {
      const scope = kind === 'global-mcp' ? 'global' : 'local';
      return clients.map(({ spec, client }) => ({ scope, service: spec.service, client: async () => client.sdkClient() }));
    },
    status() {
      return clients.map(({ spec, client }) => {
        const status = client.status();
        const entries = pins.held(spec.service);
        if (entries.length === 0) return status;
        const held = entries.map((entry) => spec.exposedName(entry.tool));
        // Old and new definition side by side (the console's Upstreams page), by exposed name for Accept.
        const heldDefinitions = entries.map((entry) => ({ name: spec.exposedName(entry.tool), tool: entry.tool, pinned: entry.pinnedDefinition, current: entry.currentDefinition }));
        return { ...status, detail: { ...status.detail, held, heldDefinitions } };
      });
    },
    async accept(name) {
      const upstream = names.upstreamOf(name);
      const accepted = upstream && (await pins.accept(upstream.service, upstream.tool));
      if (!accepted) return undefined;
      log.info({ tool: name, service: accepted.service }, 'changed MCP tool definition accepted');
      rebuild();
      return { ...accepted, name };
    },
    heldTools() {
      return clients.flatMap(({ spec }) => pins.held(spec.service).map((entry) => ({ ...entry, name: spec.exposedName(entry.tool) })));
    },
  };
}
