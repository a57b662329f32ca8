// Upstreams that act on the caller's identity, as a real Jira or GitHub would: an MCP server (the SDK,
// streamable HTTP) and a REST API that verify every bearer token with jose against the authorization
// server's JWKS and answer who called (`sub`, `client_id`, `aud`). Both record every Authorization header
// they receive, so a test can assert which tokens reached them (and that toolgate's own never did).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { serveStateless } from './mcp-upstream.js';

export interface ProtectedUpstream {
  url: string;
  /** Every Authorization header received, in order. */
  authorizations: string[];
  close(): Promise<void>;
}

function who(payload: JWTPayload): Record<string, unknown> {
  return { sub: payload.sub, client_id: payload.client_id, aud: payload.aud, act: payload.act };
}

async function verified(req: IncomingMessage, jwks: ReturnType<typeof createRemoteJWKSet>, issuer: string, audience: string): Promise<JWTPayload | undefined> {
  const header = req.headers.authorization ?? '';
  if (!header.startsWith('Bearer ')) return undefined;
  try {
    return (await jwtVerify(header.slice(7), jwks, { issuer, audience })).payload;
  } catch {
    return undefined;
  }
}

async function listen(server: Server, path: string, authorizations: string[]): Promise<ProtectedUpstream> {
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    authorizations,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/**
 * RFC 9728 protected-resource metadata the upstream publishes, read at request time so a test can change it:
 * `body` is served at `/.well-known/oauth-protected-resource<path>`, and the 401 names `metadataUrl` (default
 * that URL) in `WWW-Authenticate: Bearer resource_metadata="…"`.
 */
export interface PublishedMetadata {
  body: string;
  metadataUrl?: string;
  /** Requests for the metadata, counted. */
  served: number;
}

function refuse(res: ServerResponse, metadataUrl?: string): void {
  const challenge = `Bearer error="invalid_token"${metadataUrl ? `, resource_metadata="${metadataUrl}"` : ''}`;
  res.writeHead(401, { 'www-authenticate': challenge, 'content-type': 'application/json' }).end('{"error":"invalid_token"}');
}

interface VerifyOptions {
  issuer: string;
  jwksUrl: string;
  /** Default: the upstream's own URL (what discovered metadata names as the resource). */
  audience?: string;
  metadata?: PublishedMetadata;
}

/** A loopback server that records every Authorization header and answers 401 unless the bearer verifies. */
async function guardedServer(options: VerifyOptions, path: string, respond: (payload: JWTPayload, req: IncomingMessage, res: ServerResponse) => Promise<void>): Promise<ProtectedUpstream> {
  const jwks = createRemoteJWKSet(new URL(options.jwksUrl));
  const authorizations: string[] = [];
  const { metadata } = options;
  let origin = '';
  const server = createServer((req, res) => {
    void (async () => {
      if (metadata && req.url === `/.well-known/oauth-protected-resource${path}`) {
        metadata.served += 1;
        res.writeHead(200, { 'content-type': 'application/json' }).end(metadata.body);
        return;
      }
      authorizations.push(req.headers.authorization ?? '');
      const payload = await verified(req, jwks, options.issuer, options.audience ?? `${origin}${path}`);
      if (!payload) return refuse(res, metadata ? (metadata.metadataUrl ?? `${origin}/.well-known/oauth-protected-resource${path}`) : undefined);
      await respond(payload, req, res);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  const upstream = await listen(server, path, authorizations);
  origin = new URL(upstream.url).origin;
  return upstream;
}

/** An MCP server with one tool, `whoami`, answering the verified claims of the request that called it. */
export function startWhoamiMcp(options: VerifyOptions): Promise<ProtectedUpstream> {
  return guardedServer(options, '/mcp', async (payload, req, res) => {
    const mcp = new McpServer({ name: 'whoami-upstream', version: '1.0.0' }, { capabilities: { tools: {} } });
    mcp.server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [{ name: 'whoami', description: 'Who the upstream sees', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } }],
    }));
    mcp.server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: 'text', text: JSON.stringify(who(payload)) }] }));
    await serveStateless(mcp, req, res);
  });
}

/** A REST API: `GET /whoami` answers the verified claims; its OpenAPI document is `whoamiApiDocument(url)`. */
export function startWhoamiApi(options: VerifyOptions): Promise<ProtectedUpstream> {
  return guardedServer(options, '', async (payload, _req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(who(payload)));
  });
}

/** The OpenAPI document of the whoami API at `baseUrl`. */
export function whoamiApiDocument(baseUrl: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'whoami', version: '1' },
    servers: [{ url: baseUrl }],
    paths: { '/whoami': { get: { operationId: 'whoami', responses: { '200': { description: 'who called' } } } } },
  };
}
