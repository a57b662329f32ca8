import type { FastifyPluginAsync } from 'fastify';
import { requestMode } from '../src/http/call-options.js';
import { formatPool, LISTING_FORMATS, nativeEntry, type ListingFormat } from '../src/registry/formats.js';
import type { Pool } from '../src/registry/pool.js';
import { searchPool } from '../src/registry/search.js';
import { SEARCH_LIMIT_MAX } from '../src/registry/tool-search.js';
import { bearerSecurity, errorResponses, toolHeaders } from '../src/schemas/common.js';

const etagOf = (fingerprint: string, format: ListingFormat): string => `"${format}-${fingerprint.slice(0, 32)}"`;

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((candidate) => {
    const trimmed = candidate.trim();
    return trimmed === '*' || trimmed === etag || trimmed === `W/${etag}`;
  });
}

/** Exposure: the principal's pool, in the four client shapes, with ETag/304, and tool search. */
export const toolsRoutes: FastifyPluginAsync = async (app) => {
  // Pools are immutable and cached per snapshot, so their serialised listings can be cached with them.
  const bodies = new WeakMap<Pool, Map<ListingFormat, string>>();
  const listingBody = (pool: Pool, format: ListingFormat): string => {
    let byFormat = bodies.get(pool);
    if (!byFormat) bodies.set(pool, (byFormat = new Map()));
    let body = byFormat.get(format);
    if (body === undefined) byFormat.set(format, (body = JSON.stringify(formatPool(pool, format))));
    return body;
  };

  app.get<{ Querystring: { format: ListingFormat } }>(
    '/v1/tools',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['tools'],
        operationId: 'listTools',
        summary: "List the tools the caller's model may see",
        security: bearerSecurity,
        headers: toolHeaders,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { format: { type: 'string', enum: [...LISTING_FORMATS], default: 'native' } },
        },
        response: {
          200: {
            description: 'format=native and format=mcp answer an object `{"tools":[…]}`; format=openai and format=anthropic answer a bare array of tool definitions, the shape those SDKs take',
            // Documentation only: the body is sent pre-serialised (cached per pool and format).
            oneOf: [
              { type: 'object', required: ['tools'], properties: { tools: { type: 'array', items: { type: 'object', additionalProperties: true } } } },
              { type: 'array', items: { type: 'object', additionalProperties: true } },
            ],
          },
          304: { description: 'The pool is unchanged (If-None-Match)', type: 'null' },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const pool = await app.gateway.poolFor(request.principal, requestMode(request));
      const etag = etagOf(pool.fingerprint, request.query.format);
      reply.header('etag', etag).header('cache-control', 'private, no-cache').header('vary', 'Authorization, X-Toolgate-Mode');
      if (matchesEtag(request.headers['if-none-match'], etag)) return reply.code(304).send();
      return reply.type('application/json; charset=utf-8').send(listingBody(pool, request.query.format));
    },
  );

  app.get<{ Querystring: { q: string; limit: number } }>(
    '/v1/tools/search',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['tools'],
        operationId: 'searchTools',
        summary: 'Full schemas of the visible tools matching a query, deferred tools included',
        security: bearerSecurity,
        headers: toolHeaders,
        querystring: {
          type: 'object',
          additionalProperties: false,
          required: ['q'],
          properties: {
            q: { type: 'string', minLength: 1, maxLength: 500 },
            limit: { type: 'integer', minimum: 1, maximum: SEARCH_LIMIT_MAX, default: 10 },
          },
        },
        response: { 200: { description: 'Matches, best first', type: 'object', properties: { tools: { type: 'array', items: { type: 'object', additionalProperties: true } } } }, ...errorResponses },
      },
    },
    async (request) => {
      const pool = await app.gateway.poolFor(request.principal, requestMode(request));
      return { tools: searchPool(pool, request.query.q, request.query.limit).map((tool) => nativeEntry(pool, tool, true)) };
    },
  );
};
