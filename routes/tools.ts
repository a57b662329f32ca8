import fp from 'fastify-plugin';
import { LRUCache } from 'lru-cache';
import { requestMode } from '../src/http/call-options.js';
import { errors } from '../src/errors.js';
import { formatPool, LISTING_FORMATS, nativeEntry, STRICT_FORMATS, type ListingFormat } from '../src/registry/formats.js';
import type { Pool } from '../src/registry/pool.js';
import { searchPool } from '../src/registry/search.js';
import { SEARCH_LIMIT_MAX } from '../src/registry/tool-search.js';
import { bearerSecurity, enumErrorFormatter, errorResponses, toolHeaders, toolsetName } from '../src/schemas/common.js';
import type { RoutePlugin } from '../src/schemas/type-provider.js';

type ListingVariant = `${ListingFormat}${'' | '-strict'}`;
const etagOf = (fingerprint: string, variant: ListingVariant): string => `"${variant}-${fingerprint.slice(0, 32)}"`;

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((candidate) => {
    const trimmed = candidate.trim();
    return trimmed === '*' || trimmed === etag || trimmed === `W/${etag}`;
  });
}

/** Exposure: the principal's pool, in the four client shapes, with ETag/304, and tool search. */
const routes: RoutePlugin = async (app) => {
  // Pools are immutable and cached per snapshot, so their serialised listings can be cached with them.
  const bodies = new WeakMap<Pool, Map<ListingVariant, string>>();
  // Pools of tenants made from one template serialise to the same text: each pool keeps the one copy (keyed on
  // the text itself, so a pool only ever gets its own listing), not ~3 KiB of its own per warm tenant. Bounded in
  // characters too: a large catalog's listing is kept by its pool alone, and evicted pools' texts cannot pile up.
  const sameText = new LRUCache<string, string>({ max: 1024, maxSize: 8 * 1024 * 1024, maxEntrySize: 256 * 1024, sizeCalculation: (text) => text.length });
  const shared = (text: string): string => {
    const kept = sameText.get(text);
    if (kept !== undefined) return kept;
    sameText.set(text, text);
    return text;
  };
  const listingBody = (pool: Pool, format: ListingFormat, strict: boolean): string => {
    let byFormat = bodies.get(pool);
    if (!byFormat) bodies.set(pool, (byFormat = new Map()));
    const variant: ListingVariant = strict ? `${format}-strict` : format;
    let body = byFormat.get(variant);
    if (body === undefined) byFormat.set(variant, (body = shared(JSON.stringify(formatPool(pool, format, { strict })))));
    return body;
  };

  app.get(
    '/v1/tools',
    {
      onRequest: app.authenticate,
      schemaErrorFormatter: enumErrorFormatter,
      schema: {
        tags: ['tools'],
        operationId: 'listTools',
        summary: "List the tools the caller's model may see",
        security: bearerSecurity,
        headers: toolHeaders,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            format: { type: 'string', enum: [...LISTING_FORMATS], default: 'native' },
            strict: { type: 'boolean', default: false, description: 'openai and openai-responses only: strict-mode schemas (a tool strict mode cannot express is listed with strict: false)' },
            toolset: toolsetName,
          },
        },
        response: {
          200: {
            description:
              'format=native and format=mcp answer `{"tools":[…]}`, format=gemini `{"functionDeclarations":[…]}`; format=openai, format=openai-responses and format=anthropic answer a bare array of tool definitions, the shape those SDKs take',
            // Documentation only: the body is sent pre-serialised (cached per pool and format).
            oneOf: [
              { type: 'object', required: ['tools'], properties: { tools: { type: 'array', items: { type: 'object', additionalProperties: true } } } },
              { type: 'object', required: ['functionDeclarations'], properties: { functionDeclarations: { type: 'array', items: { type: 'object', additionalProperties: true } } } },
              { type: 'array', items: { type: 'object', additionalProperties: true } },
            ],
          },
          304: { description: 'The pool is unchanged (If-None-Match)', type: 'null' },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const { format, strict, toolset } = request.query;
      if (strict && !STRICT_FORMATS.includes(format)) throw new errors.TG_BAD_REQUEST(`strict applies to the ${STRICT_FORMATS.join(' and ')} formats only`);
      const pool = await app.gateway.poolFor(request.principal, requestMode(request), toolset);
      const etag = etagOf(pool.fingerprint, strict ? `${format}-strict` : format);
      reply.header('etag', etag).header('cache-control', 'private, no-cache').header('vary', 'Authorization, X-Toolgate-Mode');
      if (matchesEtag(request.headers['if-none-match'], etag)) return reply.code(304).send();
      return reply.type('application/json; charset=utf-8').send(listingBody(pool, format, strict));
    },
  );

  app.get(
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
            toolset: toolsetName,
          },
        },
        response: { 200: { description: 'Matches, best first', type: 'object', properties: { tools: { type: 'array', items: { type: 'object', additionalProperties: true } } } }, ...errorResponses },
      },
    },
    async (request) => {
      const pool = await app.gateway.poolFor(request.principal, requestMode(request), request.query.toolset);
      return { tools: searchPool(pool, request.query.q, request.query.limit).map((tool) => nativeEntry(pool, tool, true)) };
    },
  );
};

export const toolsRoutes = fp(routes, { name: 'toolgate-routes-tools', dependencies: ['toolgate-auth', 'toolgate-gateway', 'toolgate-admission', 'toolgate-error-handler', 'toolgate-openapi'], encapsulate: true });
