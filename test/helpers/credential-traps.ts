// Loopback traps for credentials (docs/security-model.md#where-credentials-go): an authorization server
// that records every request it receives (so a test can assert no token ever reached it), a redirector
// that sends every request on to another URL with 307 (a method- and body-preserving redirect), and an
// MCP upstream whose RFC 9728 metadata names whichever authorization server the test chooses.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { serveStateless } from './mcp-upstream.js';
import { readBody } from './oauth-as.js';

export interface RecordedRequest {
  method: string;
  path: string;
  authorization: string;
  body: string;
}

export interface Trap {
  url: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  close(): Promise<void>;
}

async function listen(handle: (req: IncomingMessage, res: ServerResponse, body: string, origin: string) => Promise<void> | void): Promise<Trap> {
  const requests: RecordedRequest[] = [];
  let origin = '';
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      requests.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization ?? '', body });
      await handle(req, res, body, origin);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: origin,
    requests,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** An authorization server that answers like a real one (metadata naming itself, tokens on request) and records everything. */
export function startRecordingAuthServer(): Promise<Trap> {
  return listen((req, res, body, origin) => {
    const path = new URL(req.url ?? '/', origin).pathname;
    if (req.method === 'GET' && path.startsWith('/.well-known/')) {
      const metadata = { issuer: origin, token_endpoint: `${origin}/token`, authorization_endpoint: `${origin}/authorize`, revocation_endpoint: `${origin}/revoke`, registration_endpoint: `${origin}/register`, response_types_supported: ['code'], code_challenge_methods_supported: ['S256'] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(metadata));
      return;
    }
    if (req.method === 'POST' && path === '/register') {
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ ...(JSON.parse(body) as object), client_id: 'trap-client', client_secret: 'trap-secret' }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: 'trap-token', token_type: 'Bearer', expires_in: 3600, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' }));
  });
}

/** Answers every request with 307 to the same path under `target` (a redirect that keeps the method and body). */
export function startRedirector(target: string): Promise<Trap> {
  return listen((req, res) => {
    res.writeHead(307, { location: `${target}${req.url ?? '/'}` }).end();
  });
}

/** An MCP upstream with one tool, `echo`, whose protected-resource metadata (RFC 9728) names `authorizationServer()`. */
export async function startSelfNamingUpstream(authorizationServer: () => string): Promise<Trap> {
  const requests: RecordedRequest[] = [];
  let origin = '';
  const server: Server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization ?? '', body: '' });
    if (req.url === '/.well-known/oauth-protected-resource/mcp') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ resource: `${origin}/mcp`, authorization_servers: [authorizationServer()] }));
      return;
    }
    const mcp = new McpServer({ name: 'self-naming-upstream', version: '1.0.0' });
    mcp.registerTool('echo', { description: 'echo' }, () => ({ content: [{ type: 'text', text: 'echo' }] }));
    void serveStateless(mcp, req, res).catch(() => res.destroy());
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/mcp`,
    requests,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
