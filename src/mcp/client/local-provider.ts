// Local MCP services (docs/architecture.md#routing-precedence, precedence 3): in-process module servers and operator-declared stdio servers.
import type { McpLocalEntry } from '../../config/types.js';
import { importUserModule } from '../../modules/import-user-module.js';
import { createMcpProvider, type McpProvider, type McpProviderDeps, type McpServiceSpec } from './mcp-provider.js';
import { generateApiFunctionName } from './naming.js';
import type { ConnectableServer, UpstreamTransportConfig } from './upstream-transport.js';

export interface LocalMcpDeps extends McpProviderDeps {
  /** Module loader (tests inject one); default: dynamic import of the absolute path. */
  importModule?: (path: string) => Promise<unknown>;
}

function isConnectable(value: unknown): value is ConnectableServer {
  return typeof value === 'object' && value !== null && typeof (value as ConnectableServer).connect === 'function' && typeof (value as ConnectableServer).close === 'function';
}

/** The module's default export: an SDK McpServer (or low-level Server), or a function returning one. */
async function serverFromModule(path: string, importModule: (path: string) => Promise<unknown>): Promise<ConnectableServer> {
  let loaded: { default?: unknown } | undefined;
  try {
    loaded = (await importModule(path)) as { default?: unknown } | undefined;
  } catch (error) {
    throw new Error(`local MCP module ${path} cannot be loaded: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const exported = loaded?.default;
  const server = typeof exported === 'function' ? await (exported as () => unknown)() : exported;
  if (!isConnectable(server)) throw new TypeError(`local MCP module ${path}: default export must be an McpServer or a function returning one`);
  return server;
}

function transportOf(entry: McpLocalEntry, importModule: (path: string) => Promise<unknown>): UpstreamTransportConfig {
  if ('module' in entry) return { transport: 'in-memory', server: () => serverFromModule(entry.module, importModule) };
  const { command, args, env, cwd } = entry;
  return { transport: 'stdio', command, args, env, ...(cwd ? { cwd } : {}) };
}

export function createLocalMcpProvider(entries: McpLocalEntry[], deps: LocalMcpDeps): McpProvider {
  const importModule = deps.importModule ?? ((path: string) => importUserModule(path));
  const specs: McpServiceSpec[] = entries.map((entry) => ({
    service: entry.service,
    config: transportOf(entry, importModule),
    required: entry.required ?? false,
    lazy: entry.lazy ?? false,
    pin: true,
    exposedName: (tool) => generateApiFunctionName(entry.service, tool),
  }));
  return createMcpProvider('local-mcp', specs, deps);
}
