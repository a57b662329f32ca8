// Global MCP services (docs/architecture.md#routing-precedence, precedence 5): shared upstreams, named by upstream tool name
// (sanitized) or with a prefix; the tenant's `mcpServices` allowlist is the registry's job.
import type { Tool as McpTool } from '@modelcontextprotocol/client';
import type { McpGlobalEntry, UpstreamAuthConfig } from '../../config/types.js';
import type { Principal } from '../../call/principal.js';
import type { ServiceCredentials } from '../../call/upstream-credential.js';
import type { ToolSpec } from '../../call/types.js';
import { resolveIdentityHeaders } from './identity-headers.js';
import { createMcpProvider, type McpProvider, type McpProviderDeps, type McpServiceSpec } from './mcp-provider.js';
import { sanitizeUpstreamName } from './naming.js';
import type { UpstreamTransportConfig } from './upstream-transport.js';

const SEARCH_HINT_CHARS = 80;

export function globalToolName(entry: Pick<McpGlobalEntry, 'id' | 'prefix'>, tool: string): string {
  const prefix = entry.prefix === true ? entry.id : typeof entry.prefix === 'string' && entry.prefix.length > 0 ? entry.prefix : undefined;
  return sanitizeUpstreamName(prefix === undefined ? tool : `${prefix}_${tool}`);
}

function transportOf(entry: McpGlobalEntry): UpstreamTransportConfig {
  if (entry.transport === 'stdio') {
    const { command, args, env, cwd } = entry;
    return { transport: 'stdio', command, args, env, ...(cwd ? { cwd } : {}) };
  }
  return { transport: entry.transport, url: entry.url, headers: entry.headers };
}

function extraFor(entry: McpGlobalEntry): (tool: McpTool) => Partial<ToolSpec> {
  return (tool) => ({
    ...(entry.defer ? { deferLoading: true, searchHint: (tool.description ?? tool.name).slice(0, SEARCH_HINT_CHARS) } : {}),
    ...(entry.timeoutMs !== undefined ? { timeoutMs: entry.timeoutMs } : {}),
  });
}

export interface GlobalMcpProviderDeps extends McpProviderDeps {
  /** The credentials of a service with an `auth` object (src/upstream-auth/identity.ts). */
  credentialsFor?: (service: string, auth: UpstreamAuthConfig) => ServiceCredentials;
}

export function createGlobalMcpProvider(entries: McpGlobalEntry[], deps: GlobalMcpProviderDeps): McpProvider {
  const specs: McpServiceSpec[] = entries.map((entry) => {
    const templates = entry.forwardIdentity ?? {};
    const auth = 'auth' in entry ? entry.auth : undefined;
    if (auth && !deps.credentialsFor) throw new Error(`global MCP service ${entry.id}: auth is configured but no credential source was given`);
    const credentials = auth && deps.credentialsFor ? deps.credentialsFor(entry.id, auth) : undefined;
    const hasIdentity = Object.keys(templates).length > 0;
    return {
      service: entry.id,
      config: transportOf(entry),
      required: entry.required,
      lazy: entry.lazy ?? false,
      pin: entry.pin,
      exposedName: (tool) => globalToolName(entry, tool),
      ...(hasIdentity ? { headersFor: (principal: Principal) => resolveIdentityHeaders(templates, principal) } : {}),
      ...(credentials ? { credentials } : {}),
      extra: extraFor(entry),
    };
  });
  return createMcpProvider('global-mcp', specs, deps);
}
