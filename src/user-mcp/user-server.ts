// One connected user-level MCP server, as its owner sees it: the shared upstream session
// (src/mcp/upstream-session.ts) over the pinned egress fetch, a listing cached until the server says it
// changed, and the owner's tools built from it. Only the user-specific parts live here: the owner
// check, per-user names, fail-closed annotations.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { FetchLike } from '../egress/pinned-fetch.js';
import { ToolError } from '../execution/tool-error.js';
import { toToolOutput } from '../mcp/result.js';
import { callUpstreamTool, describeError, listAllTools, openSession, type UpstreamSession } from '../mcp/upstream-session.js';
import { defineTool } from '../registry/define-tool.js';
import type { JsonObject, Logger, Principal, Tool, ToolContext } from '../types.js';
import { userServiceKey, userToolName } from '../registry/user-names.js';
import type { UserMcpRegistration } from './registrations.js';

/** Pages of one listing: a server that pages forever cannot hold the listing hostage. */
const MAX_LIST_PAGES = 50;
/** The SDK's default request cap, kept for user servers; the timeout policy normally aborts earlier. */
const CALL_TIMEOUT_MS = 60_000;

export interface UserServerOptions {
  owner: Principal;
  registration: UserMcpRegistration;
  /** The pinned egress fetch (src/egress/pinned-fetch.ts). */
  fetch: FetchLike;
  timeoutMs: number;
  log: Logger;
  /** The connection dropped or a call found it dead: the cache forgets this server. */
  onLost: (server: UserServer) => void;
  /** The live server for this registration at call time (reconnects after a drop). */
  current: () => Promise<UserServer>;
}

export class UserServer {
  private listing: Promise<McpTool[]> | undefined;
  /** Tools built from the last listing, rebuilt only when the listing object changes. */
  private built: { from: McpTool[]; tools: Tool[] } | undefined;

  private constructor(
    private readonly options: UserServerOptions,
    private readonly session: UpstreamSession,
    private readonly service: string,
  ) {}

  static async open(options: UserServerOptions): Promise<UserServer> {
    const { registration, owner } = options;
    const service = userServiceKey(owner.user, registration.serviceId);
    let server: UserServer | undefined;
    const session = await openSession(
      { transport: registration.transport, url: registration.url, headers: registration.headers },
      {
        label: service,
        log: options.log,
        timeoutMs: options.timeoutMs,
        fetch: options.fetch,
        clientName: 'toolgate-user-mcp',
        onToolsChanged: () => server?.forgetListing(),
        onClose: () => {
          server?.forgetListing();
          if (server) options.onLost(server);
        },
      },
    );
    server = new UserServer(options, session, service);
    return server;
  }

  /** The owner's tools from this server, listed once and kept until the server says its list changed. */
  async tools(): Promise<Tool[]> {
    const listed = await this.list();
    if (this.built?.from !== listed) this.built = { from: listed, tools: listed.map((upstream) => this.toolFor(upstream)) };
    return this.built.tools;
  }

  close(): Promise<void> {
    return this.session.close();
  }

  /** The owner's connected SDK client (resources and prompts of this server). */
  get client(): Client {
    return this.session.client;
  }

  async call(tool: string, args: JsonObject, ctx: ToolContext): Promise<{ output: string; trace: unknown }> {
    const target = { session: this.session, service: this.service, timeoutMs: CALL_TIMEOUT_MS, onLost: () => this.options.onLost(this) };
    return toToolOutput(await callUpstreamTool(target, tool, args, { signal: ctx.signal, depth: ctx.depth }));
  }

  private forgetListing(): void {
    this.listing = undefined;
  }

  private list(): Promise<McpTool[]> {
    if (!this.listing) {
      const pending = listAllTools(this.session, { timeoutMs: this.options.timeoutMs, maxPages: MAX_LIST_PAGES });
      this.listing = pending;
      pending.catch(() => {
        if (this.listing === pending) this.listing = undefined;
      });
    }
    return this.listing;
  }

  private toolFor(upstream: McpTool): Tool {
    const { tenant, user: sub } = this.options.owner;
    const readOnly = upstream.annotations?.readOnlyHint === true;
    return defineTool({
      name: userToolName(sub, upstream.name),
      description: upstream.description ?? upstream.title ?? '',
      inputSchema: (upstream.inputSchema ?? { type: 'object' }) as JsonObject,
      ...(upstream.outputSchema ? { outputSchema: upstream.outputSchema as JsonObject } : {}),
      source: 'user-mcp',
      service: this.service,
      readOnly,
      // MCP's default for a tool that is not read-only is "may be destructive".
      destructive: !readOnly && upstream.annotations?.destructiveHint !== false,
      idempotent: upstream.annotations?.idempotentHint === true,
      handler: async (args: JsonObject, ctx: ToolContext) => {
        // Defence in depth: the registry only lists these for their owner, but never trust that alone.
        if (ctx.principal.tenant !== tenant || ctx.principal.user !== sub) {
          throw new ToolError('PERMISSION_DENIED', 'this tool belongs to another user');
        }
        const server = await this.options.current().catch((error: unknown) => {
          throw new ToolError('UPSTREAM_ERROR', `user MCP server ${this.options.registration.serviceId} is unreachable: ${describeError(error)}`);
        });
        return server.call(upstream.name, args, ctx);
      },
    });
  }
}
