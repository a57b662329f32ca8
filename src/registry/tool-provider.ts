import type { Client } from '@modelcontextprotocol/client';
import type { Logger, Tool, ToolSourceKind } from '../call/types.js';
import type { Principal } from '../call/principal.js';

/** Where an MCP service is configured: its namespace in resource URIs and prompt names (docs/architecture.md#resources-and-prompts). */
export type McpServiceScope = 'global' | 'local' | 'user';

/** The part of an SDK client that resources and prompts use. */
export type McpServiceClient = Pick<Client, 'getServerCapabilities' | 'listResources' | 'listResourceTemplates' | 'readResource' | 'listPrompts' | 'getPrompt'>;

/** An MCP upstream as its resources and prompts are reached (src/mcp/server). */
export interface McpService {
  readonly scope: McpServiceScope;
  /** The global service id, the local service name, or the user's own serviceId. */
  readonly service: string;
  /** The connected SDK client; undefined while the upstream is down or cannot be reached. */
  client(): Promise<McpServiceClient | undefined>;
}

/** State of one upstream (MCP service, retrieval backend) for /readyz and /v1/admin/upstreams. */
export interface UpstreamStatus {
  service: string;
  kind: string;
  state: 'connecting' | 'ready' | 'down' | 'closed';
  required: boolean;
  toolCount: number;
  lastError?: string;
  detail?: Record<string, unknown>;
}

/**
 * A source of tools. The catalog (`allTools()`) is the union of every provider's `tools()`; providers
 * never narrow per principal — that is the registry's job.
 */
export interface ToolProvider {
  readonly kind: ToolSourceKind;
  /** The provider's current tools, already made with `defineTool`. Must be cheap: called on every catalog rebuild. */
  tools(): readonly Tool[];
  /** Connect upstreams, load modules. Called once before the server accepts traffic. */
  start?(): Promise<void>;
  /** Release everything (children, sockets, timers). Called on shutdown and when a reload replaces the provider. */
  close?(): Promise<void>;
  /** Called by the provider's owner to learn when `tools()` changed (e.g. MCP list_changed, reconnect). */
  onChange?(listener: () => void): void;
  status?(): UpstreamStatus[];
  /** MCP providers: every upstream service, for resources and prompts. */
  mcpServices?(): readonly McpService[];
}

/** Tools that exist only for one principal (user-level MCP servers). Added last in the narrowing chain. */
export interface UserToolProvider {
  readonly kind: 'user-mcp';
  /** The caller's own tools. */
  toolsFor(principal: Principal, log: Logger): Promise<readonly Tool[]>;
  /** The caller's own MCP servers, for resources and prompts (connected on first use). */
  servicesFor?(principal: Principal, log: Logger): Promise<readonly McpService[]>;
  close?(): Promise<void>;
  /** `tenant`: counted for that tenant only (a tenant admin's view); without it, across every tenant. */
  status?(tenant?: string): UpstreamStatus[];
}
