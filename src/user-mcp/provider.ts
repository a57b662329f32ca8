// The UserToolProvider for user-level MCP servers (CONTRACT §3, precedence 2): a principal sees
// only the tools of the servers registered under its own tenant and raw `sub`, named
// `user_<userKey>_tool_<tool>`. Clients connect lazily on first use and are cached per
// (tenant, sub, serviceId). Registration headers go only to that upstream; the caller's own
// Authorization never does (handlers never see it).
import { createHash } from 'node:crypto';
import type { CallToolResult, Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { createPinnedFetch, type PinnedFetch } from '../egress/pinned-fetch.js';
import type { EgressOptions } from '../egress/check-egress.js';
import { defineTool } from '../registry/define-tool.js';
import type { UserToolProvider, UpstreamStatus } from '../registry/provider.js';
import { ToolError } from '../execution/tool-error.js';
import type { JsonObject, Logger, Principal, Tool, ToolContext } from '../types.js';
import { createClientCache } from './client-cache.js';
import { userServiceKey, userToolName } from '../registry/user-names.js';
import { registrationPrefix, type UserMcpRegistration, type UserMcpRegistrations } from './registrations.js';
import { connectUserMcp, withCallDepth, type UserMcpConnection } from './upstream-client.js';

export interface UserMcpProviderDeps {
  registrations: UserMcpRegistrations;
  egress: EgressOptions;
  /** TenantConfig.userMcp.enabled; a tenant without it sees no user-level tools. */
  enabledFor?: (tenant: string) => boolean;
  /** Bound on connected clients across all users (default 256). */
  maxClients?: number;
  /** A client unused this long is closed (default 5 minutes). */
  idleMs?: number;
  /** Connect and tools/list timeout (default 10 s). */
  connectTimeoutMs?: number;
}

export interface UserMcpProvider extends UserToolProvider {
  /** Drops a user's cached client (call after PUT/DELETE of a registration). */
  forget(tenant: string, sub: string, serviceId?: string): Promise<void>;
  close(): Promise<void>;
}

interface Connected {
  connection: UserMcpConnection;
  /** Tools built from the last listing, rebuilt only when the listing object changes. */
  built?: { from: McpTool[]; tools: Tool[] };
}

/** MCP text content joined; other content summarised here and kept whole in the trace. */
export function mcpResultText(result: CallToolResult): { text: string; hasRichContent: boolean } {
  let hasRichContent = result.structuredContent !== undefined;
  const parts = (result.content ?? []).map((block) => {
    if (block.type === 'text') return block.text;
    hasRichContent = true;
    if (block.type === 'image' || block.type === 'audio') return `[${block.type}: ${block.mimeType}]`;
    if (block.type === 'resource') return `[resource: ${block.resource.uri}]`;
    if (block.type === 'resource_link') return `[resource link: ${block.uri}]`;
    return `[${(block as { type: string }).type}]`;
  });
  if (parts.length === 0 && result.structuredContent !== undefined) return { text: JSON.stringify(result.structuredContent), hasRichContent };
  return { text: parts.join('\n'), hasRichContent };
}

/** Shared and frozen: the answer for every caller without servers of their own. */
const NO_TOOLS: readonly Tool[] = Object.freeze([]);
const cacheKey = (tenant: string, sub: string, serviceId: string): string => `${registrationPrefix(tenant, sub)}${serviceId}`;

// Changing the URL, transport or headers of a registration must reconnect; the hash keeps header
// values out of memory dumps of the cache keys.
const fingerprintOf = (registration: UserMcpRegistration): string =>
  createHash('sha256').update(JSON.stringify([registration.url, registration.transport, registration.headers])).digest('hex');

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function createUserMcpProvider(deps: UserMcpProviderDeps): UserMcpProvider {
  const timeoutMs = deps.connectTimeoutMs ?? 10_000;
  const idleMs = deps.idleMs ?? 5 * 60_000;
  const pinned: PinnedFetch = createPinnedFetch(deps.egress);
  const cache = createClientCache<Connected>({
    maxEntries: Math.max(1, deps.maxClients ?? 256),
    idleMs,
    close: (entry) => entry.connection.close(),
  });
  const sweeper = setInterval(() => void cache.evictIdle(), Math.max(1000, Math.floor(idleMs / 2)));
  sweeper.unref();

  async function open(key: string, registration: UserMcpRegistration): Promise<Connected> {
    let connected: Connected | undefined;
    const connection = await connectUserMcp(registration, {
      fetch: pinned.fetch,
      timeoutMs,
      // A dropped connection is forgotten, so the next listing or call reconnects.
      onClose: () => {
        if (connected) void cache.evictIfCurrent(key, connected);
      },
    });
    connected = { connection };
    return connected;
  }

  function buildTools(principal: Principal, registration: UserMcpRegistration, key: string, listed: McpTool[]): Tool[] {
    const { tenant, user: sub } = principal;
    const service = userServiceKey(sub, registration.serviceId);
    return listed.map((upstream) => {
      const readOnly = upstream.annotations?.readOnlyHint === true;
      return defineTool({
        name: userToolName(sub, upstream.name),
        description: upstream.description ?? upstream.title ?? '',
        inputSchema: (upstream.inputSchema ?? { type: 'object' }) as JsonObject,
        source: 'user-mcp',
        service,
        readOnly,
        // MCP's default for a tool that is not read-only is "may be destructive".
        destructive: !readOnly && upstream.annotations?.destructiveHint !== false,
        idempotent: upstream.annotations?.idempotentHint === true,
        handler: async (args: JsonObject, ctx: ToolContext) => {
          // Defence in depth: the registry only lists these for their owner, but never trust that alone.
          if (ctx.principal.tenant !== tenant || ctx.principal.user !== sub) {
            throw new ToolError('PERMISSION_DENIED', 'this tool belongs to another user');
          }
          const entry = await cache.get(key, fingerprintOf(registration), () => open(key, registration)).catch((error: unknown) => {
            throw new ToolError('UPSTREAM_ERROR', `user MCP server ${registration.serviceId} is unreachable: ${errorMessage(error)}`);
          });
          let result: CallToolResult;
          try {
            result = (await withCallDepth(ctx.depth + 1, () =>
              entry.connection.client.callTool({ name: upstream.name, arguments: args }, undefined, { signal: ctx.signal }),
            )) as CallToolResult;
          } catch (error) {
            if (ctx.signal.aborted) throw error; // the timeout/cancel path owns this failure
            throw new ToolError('UPSTREAM_ERROR', errorMessage(error));
          }
          const { text, hasRichContent } = mcpResultText(result);
          if (result.isError === true) throw new ToolError('UPSTREAM_ERROR', text, { trace: hasRichContent ? result : null });
          return hasRichContent ? { output: text, trace: result } : text;
        },
      });
    });
  }

  async function toolsOf(principal: Principal, registration: UserMcpRegistration, log: Logger): Promise<Tool[]> {
    const key = cacheKey(principal.tenant, principal.user, registration.serviceId);
    try {
      const entry = await cache.get(key, fingerprintOf(registration), () => open(key, registration));
      const listed = await entry.connection.listTools({ timeoutMs });
      if (entry.built?.from !== listed) entry.built = { from: listed, tools: buildTools(principal, registration, key, listed) };
      return entry.built.tools;
    } catch (error) {
      // Logged without URL or headers: both belong to the user. One broken server hides only its own tools.
      log.warn({ service: userServiceKey(principal.user, registration.serviceId), err: errorMessage(error) }, 'user MCP server unavailable');
      await cache.evict(key);
      return [];
    }
  }

  async function toolsOfAll(principal: Principal, registrations: readonly UserMcpRegistration[], log: Logger): Promise<Tool[]> {
    const perService = await Promise.all(registrations.map((registration) => toolsOf(principal, registration, log)));
    // Two of a user's servers may offer the same name: the older registration wins, deterministically.
    const seen = new Set<string>();
    const tools: Tool[] = [];
    for (const tool of perService.flat()) {
      if (seen.has(tool.name)) {
        log.warn({ tool: tool.name, service: tool.service }, 'user MCP tool shadowed by an older registration');
        continue;
      }
      seen.add(tool.name);
      tools.push(tool);
    }
    return tools;
  }

  // A user without registrations shares one frozen empty list.
  async function toolsFrom(principal: Principal, registrations: readonly UserMcpRegistration[], log: Logger): Promise<readonly Tool[]> {
    return registrations.length === 0 ? NO_TOOLS : toolsOfAll(principal, registrations, log);
  }

  return {
    kind: 'user-mcp',
    // One store read per call: most callers have no servers of their own.
    async toolsFor(principal, log) {
      if (deps.enabledFor && !deps.enabledFor(principal.tenant)) return NO_TOOLS;
      return toolsFrom(principal, await deps.registrations.list(principal.tenant, principal.user), log);
    },
    async forget(tenant, sub, serviceId) {
      if (serviceId === undefined) await cache.evictPrefix(registrationPrefix(tenant, sub));
      else await cache.evict(cacheKey(tenant, sub, serviceId));
    },
    status(): UpstreamStatus[] {
      // One aggregate row: per-user rows would show one tenant's user keys to another tenant's admin.
      return [{ service: 'user-mcp', kind: 'user-mcp', state: 'ready', required: false, toolCount: 0, detail: { connectedClients: cache.size } }];
    },
    async close() {
      clearInterval(sweeper);
      await cache.closeAll();
      pinned.close();
    },
  };
}
