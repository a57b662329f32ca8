// One connected user-level MCP server, as its owner sees it: the shared upstream session
// (src/mcp/client/upstream-session.ts) over the pinned egress fetch, a listing cached until the server says it
// changed, and the owner's tools built from it. Only the user-specific parts live here: the owner
// check, per-user names, fail-closed annotations.
import type { Client, Tool as McpTool } from '@modelcontextprotocol/client';
import type { FetchLike } from '../../egress/pinned-fetch.js';
import { ToolError } from '../../call/tool-error.js';
import { toToolOutput } from '../client/result.js';
import { callUpstreamTool, describeError, listAllTools, openSession, type UpstreamSession } from '../client/upstream-session.js';
import type { UpstreamEra } from '../client/upstream-era.js';
import { defineTool } from '../../registry/define-tool.js';
import { userServiceKey, userToolName } from '../../registry/user-names.js';
import type { JsonObject, Logger, Tool, ToolContext } from '../../call/types.js';
import type { Principal } from '../../call/principal.js';
import type { ServiceCredentials } from '../../call/upstream-credential.js';
import { holdCredential, sessionCredentialFetch } from '../client/upstream-fetch.js';
import { recordCredential } from '../../observability/tracing.js';
import { boundServerListing, type UserCatalogLimits } from './catalog-limits.js';
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
  /** The server's `auth` (the owner's own connection or client): each call carries the owner's credential. */
  credentials?: ServiceCredentials;
  timeoutMs: number;
  log: Logger;
  /** The connection dropped or a call found it dead: the cache forgets this server. */
  onLost: (server: UserServer) => void;
  /** The live server for this registration at call time (reconnects after a drop). */
  current: () => Promise<UserServer>;
  /**
   * A listing is kept at least this long, even when the server says its list changed: a server that
   * announces changes without end re-lists (and rebuilds) at most once per interval.
   */
  minRelistMs: number;
}

/** One of the owner's tools and what it weighs against `userMcp.maxCatalogBytes`. */
export interface SizedUserTool {
  tool: Tool;
  bytes: number;
}

const sameLimits = (a: UserCatalogLimits, b: UserCatalogLimits): boolean =>
  a.maxToolsPerServer === b.maxToolsPerServer && a.maxDescriptionChars === b.maxDescriptionChars && a.maxSchemaBytes === b.maxSchemaBytes && a.maxCatalogBytes === b.maxCatalogBytes;

export class UserServer {
  private listing: { maxItems: number; tools: Promise<McpTool[]>; at: number; stale: boolean } | undefined;
  /** Tools built from the last listing within the tenant's limits, rebuilt only when either changes. */
  private built: { from: McpTool[]; limits: UserCatalogLimits; tools: readonly SizedUserTool[] } | undefined;

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
        fetch: options.credentials ? sessionCredentialFetch(options.credentials, options.fetch) : options.fetch,
        clientName: 'toolgate-user-mcp',
        onToolsChanged: () => server?.listingChanged(),
        onClose: () => {
          server?.forgetListing();
          if (server) options.onLost(server);
        },
      },
    );
    server = new UserServer(options, session, service);
    return server;
  }

  /**
   * The owner's tools from this server, listed once and kept until the server says its list changed, bounded
   * by the tenant's `userMcp` limits (docs/security-model.md#user-catalog-bounds). The same array is returned
   * until something changes, so what is built from it can be kept too.
   */
  async tools(limits: UserCatalogLimits): Promise<readonly SizedUserTool[]> {
    // One more than the cap: enough to tell the server listed too many, without reading every page.
    const listed = await this.list(limits.maxToolsPerServer + 1);
    if (this.built?.from !== listed || !sameLimits(this.built.limits, limits)) {
      const bounded = boundServerListing(listed, limits, this.service, this.options.log);
      this.built = { from: listed, limits, tools: bounded.map(({ upstream, bytes }) => ({ tool: this.toolFor(upstream), bytes })) };
    }
    return this.built.tools;
  }

  close(): Promise<void> {
    return this.session.close();
  }

  /** The protocol era this server's connection negotiated (docs/mcp.md#upstream-eras). */
  get era(): UpstreamEra {
    return this.session.era;
  }

  /** The owner's connected SDK client (resources and prompts of this server). */
  get client(): Client {
    return this.session.client;
  }

  async call(tool: string, args: JsonObject, ctx: ToolContext): Promise<{ output: string; trace: unknown }> {
    const target = { session: this.session, service: this.service, timeoutMs: CALL_TIMEOUT_MS, onLost: () => this.options.onLost(this) };
    const { credentials } = this.options;
    if (!credentials) return toToolOutput(await callUpstreamTool(target, tool, args, { signal: ctx.signal, depth: ctx.depth }));
    // The credential rides as a handle (src/mcp/upstream-fetch.ts), never in the message.
    const credential = await credentials.forCall(ctx.principal, ctx.signal);
    const held = holdCredential(credential.authorization);
    try {
      const output = toToolOutput(await callUpstreamTool(target, tool, args, { signal: ctx.signal, depth: ctx.depth, headers: held.headers }));
      const trace = typeof output.trace === 'object' && output.trace !== null ? output.trace : {};
      return { ...output, trace: { ...trace, credential: recordCredential(credential) } };
    } finally {
      held.release();
    }
  }

  private forgetListing(): void {
    this.listing = undefined;
  }

  private listingChanged(): void {
    if (this.listing) this.listing.stale = true;
  }

  private list(maxItems: number): Promise<McpTool[]> {
    let listing = this.listing;
    const now = Date.now();
    if (!listing || listing.maxItems !== maxItems || (listing.stale && now - listing.at >= this.options.minRelistMs)) {
      const pending = listAllTools(this.session, { timeoutMs: this.options.timeoutMs, maxPages: MAX_LIST_PAGES, maxItems });
      const fresh = { maxItems, tools: pending, at: now, stale: false };
      listing = this.listing = fresh;
      pending.catch(() => {
        if (this.listing === fresh) this.listing = undefined;
      });
    }
    return listing.tools;
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
