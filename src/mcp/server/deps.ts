// What toolgate's MCP endpoint needs from the rest of the gateway (docs/architecture.md#mcp-endpoint), as one
// plain object the composition root fills (routes/mcp.ts): the endpoint reads nothing off the Fastify
// instance, so it can be wired from decorators, plugins or a test's fakes alike.
import type { Gateway } from '../../gateway.js';
import type { AuditSink } from '../../audit/types.js';
import type { CatalogGovernanceDeps } from '../../catalog/resource-catalog-governance.js';
import type { Drain } from '../../http/drain.js';
import type { TenantSlots } from '../../http/tenant-slots.js';
import type { GatewayMetrics } from '../../observability/gateway-metrics.js';
import type { MessageBus } from '../../store/bus.js';
import type { StateStore } from '../../store/types.js';
import type { TaskService } from '../../tasks/service.js';
import type { Logger } from '../../call/types.js';
import type { TenantView } from '../../registry/tenant-view.js';

/** The gateway's queries and its one execution path, as far as MCP uses them. */
export type McpGateway = Pick<Gateway, 'config' | 'tenant' | 'loadTenant' | 'assertToolset' | 'poolFor' | 'execute' | 'toolCalled' | 'approvalGate' | 'mcpServicesFor' | 'onChange'>;

export interface McpEndpointDeps {
  gateway: McpGateway;
  /** The governance services the endpoint's calls, reads, sessions and tasks go through. */
  audit: AuditSink;
  tasks: TaskService;
  store: StateStore;
  bus: MessageBus;
  /** What the resource-read and prompt-get rate limit and audit read (src/catalog/resource-catalog-governance.ts). */
  catalog: CatalogGovernanceDeps;
  /** Ends the calls still running at shutdown. */
  drain: Pick<Drain, 'track'>;
  /** The tenants' in-flight slots, for a task's detached run. */
  tenantSlots: TenantSlots;
  metrics: Pick<GatewayMetrics, 'watchMcpStreams' | 'countMcpSession'>;
  log: Logger;
}

/**
 * The tenant's view: at once when it is compiled already (every request's tenant is, authentication compiled it),
 * else once compiled again (the bounded cache may have dropped it); undefined for a tenant configured nowhere now.
 * `loadTenant` answers the same, always through a promise.
 */
export function tenantView(gateway: Pick<McpGateway, 'tenant' | 'loadTenant'>, id: string): TenantView | undefined | Promise<TenantView | undefined> {
  return gateway.tenant(id) ?? gateway.loadTenant(id);
}
