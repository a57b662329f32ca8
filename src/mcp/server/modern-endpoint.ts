// The 2026-07-28 era of /mcp (docs/mcp.md#two-protocol-eras): which requests are modern, and how they are
// served — by the SDK v2 serving entry, statelessly, one SDK server per request, on any replica.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { McpEndpointDeps } from './deps.js';
import { createMcpHandler, InMemoryServerEventBus, type McpHttpHandler, type McpServerFactory } from '@modelcontextprotocol/server';
import type { SessionHub } from './session-hub.js';
import { createListenStreams } from './listen-streams.js';
import type { CatalogGovernance } from '../../catalog/resource-catalog-governance.js';
import { modernServerFor, needsRequestSignal, type ModernRequest } from './modern-server.js';
import { createModernQuestions } from './modern-questions.js';
import { sendWebResponse, toWebRequest } from './web-exchange.js';
import { asksDiscover, withLegacyVersions } from './discover-versions.js';
import { isLegacyPost } from './era.js';

export interface ModernEndpoint {
  /**
   * The request is of the 2026-07-28 era, as the SDK's own classification says (the `_meta` protocol-version
   * claim, or a modern MCP-Protocol-Version header): the modern path owns its answer, errors included.
   */
  claims(request: FastifyRequest): boolean;
  /** Serves one modern POST (the reply is hijacked). */
  serve(request: FastifyRequest, reply: FastifyReply, toolset: string | undefined): Promise<void>;
  /** Ends the modern exchanges in flight (before the listener closes). */
  close(): Promise<void>;
}

export function createModernEndpoint(deps: McpEndpointDeps, catalog: CatalogGovernance, hub: SessionHub): ModernEndpoint {
  // The entry builds each request's server through one factory, which finds its Fastify request by the web Request
  // (held only while the entry serves it: a Map entry dropped at once, not a WeakMap entry left to the collector).
  const pending = new Map<Request, ModernRequest>();
  const questions = createModernQuestions({ bus: deps.bus, store: deps.store, log: deps.log, credentials: () => deps.gateway.config.credentials });
  const factory: McpServerFactory = ({ requestInfo }) => {
    const context = requestInfo && pending.get(requestInfo);
    if (!context) throw new Error('an MCP request without its HTTP request');
    return modernServerFor(context);
  };
  const options = {
    // Legacy traffic never reaches these handlers: the endpoint routes it to the session layer first.
    legacy: 'reject',
    onerror: (error: Error) => deps.log.debug({ err: error }, 'modern MCP exchange refused or failed'),
  } as const;
  const handler: McpHttpHandler = createMcpHandler(factory, options);
  const listens = createListenStreams(deps, hub);

  const exchange = async (target: McpHttpHandler, request: FastifyRequest, reply: FastifyReply, toolset: string | undefined, web: Request): Promise<void> => {
    pending.set(web, { deps, catalog, questions, request, reply, toolset });
    let answered: Response;
    try {
      answered = await target.fetch(web, { parsedBody: request.body });
    } finally {
      pending.delete(web);
    }
    // server/discover also names the legacy revisions this endpoint serves through initialize.
    const response = asksDiscover(request.body) ? await withLegacyVersions(answered) : answered;
    reply.hijack();
    await sendWebResponse(reply, response, { 'x-request-id': request.id });
  };

  return {
    claims: (request) => {
      const version = request.headers['mcp-protocol-version'];
      return !isLegacyPost(request.body, typeof version === 'string' ? version : undefined);
    },
    async serve(request, reply, toolset) {
      const web = toWebRequest(request, reply, needsRequestSignal(request.body));
      if (!listensForChanges(request.body)) return exchange(handler, request, reply, toolset, web);
      // A subscription stream has a handler of its own, whose bus carries only this caller's changes.
      const bus = new InMemoryServerEventBus();
      const listener = createMcpHandler(factory, { ...options, bus });
      const listening = await listens.open(request, toolset, bus, () => void listener.close());
      // The stream holds no admission slot while it is open (its own bound is in listen-streams.ts).
      request.releaseSlot?.();
      try {
        await exchange(listener, request, reply, toolset, web);
      } finally {
        listening.close();
        void listener.close();
      }
    },
    close: () => {
      questions.held.close();
      return handler.close();
    },
  };
}

const listensForChanges = (body: unknown): boolean => typeof body === 'object' && body !== null && 'method' in body && body.method === 'subscriptions/listen';
