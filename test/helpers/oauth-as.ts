// A real OAuth 2 authorization server on loopback for the upstream-identity tests: oauth2-mock-server
// (discovery, JWKS, authorization code + PKCE, refresh, client credentials) behind a small front that adds
// what it lacks — RFC 8693 token exchange, RFC 7009 revocation that sticks, refresh-token rotation, single
// use codes, and who logged in (the test's "browser" names the user with `login_hint`). Hostile modes make
// the token endpoint slow, huge or malformed.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jwtVerify } from 'jose';
import { OAuth2Server } from 'oauth2-mock-server';

export type TokenEndpointMode = 'normal' | 'slow' | 'huge' | 'malformed' | 'error500';

export interface TestAuthServer {
  /** The issuer URL (discovery at `<url>/.well-known/openid-configuration`). */
  url: string;
  jwksUrl: string;
  /** Token requests by grant type. */
  grants: string[];
  /** Every access and refresh token issued, to grep outputs for. */
  issued: string[];
  revoked: Set<string>;
  /** Access tokens issued live this many seconds (as `expires_in`; the JWT keeps its own `exp`). */
  expiresIn: number;
  mode: TokenEndpointMode;
  /** Who is logged in at the server when the authorization request names nobody (`login_hint`): a browser's session. */
  loginAs: string;
  /** RFC 7591 registrations received (the metadata asked for) and the clients issued, in order. */
  registrations: Array<{ request: Record<string, unknown>; clientId: string; clientSecret: string }>;
  /** How long the registration endpoint takes to answer (so replicas' registrations overlap). */
  registrationDelayMs: number;
  /** Fields laid over the served metadata (a hostile server's endpoints). */
  metadataOverrides: Record<string, unknown>;
  /** Clients the server no longer knows: their token requests answer 401 invalid_client. */
  forgottenClients: Set<string>;
  /**
   * Client ID Metadata Documents: set, the server advertises `client_id_metadata_document_supported` and takes
   * an https URL as a client id, fetching the document through this (the test maps the URL to loopback).
   */
  clientMetadataFetch: ((url: string) => Promise<Response>) | undefined;
  /** Each document fetched for a URL client id, with the step that fetched it. */
  metadataDocuments: Array<{ at: 'authorize' | 'token'; url: string; document: Record<string, unknown> }>;
  /** Whether each token request of a URL client id came with client credentials (it must not: a public client). */
  urlClientCredentials: boolean[];
  close(): Promise<void>;
}

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function basicClient(req: IncomingMessage, form: URLSearchParams): string | undefined {
  const header = req.headers.authorization;
  if (header?.startsWith('Basic ')) return decodeURIComponent(Buffer.from(header.slice(6), 'base64').toString('utf8').split(':')[0] ?? '');
  return form.get('client_id') ?? undefined;
}

/** `subjectSecret`: the HS256 secret the inbound (toolgate) tokens are signed with, which token exchange trusts. */
export async function startAuthServer(options: { subjectSecret: string }): Promise<TestAuthServer> {
  const mock = new OAuth2Server();
  await mock.issuer.keys.generate('RS256');
  await mock.start(0, '127.0.0.1');
  const mockUrl = `http://127.0.0.1:${mock.address().port}`;
  const codeUsers = new Map<string, string>();
  const refreshUsers = new Map<string, string>();
  const usedCodes = new Set<string>();
  const state: TestAuthServer = { url: '', jwksUrl: '', grants: [], issued: [], revoked: new Set(), expiresIn: 3600, mode: 'normal', loginAs: 'johndoe', registrations: [], registrationDelayMs: 0, metadataOverrides: {}, forgottenClients: new Set(), clientMetadataFetch: undefined, metadataDocuments: [], urlClientCredentials: [], close: async () => {} };

  // Who logged in at the authorization endpoint (the test's browser says so with login_hint).
  mock.service.on('beforeAuthorizeRedirect', (redirect: { url: URL }, req: IncomingMessage) => {
    const hint = new URL(req.url ?? '/', mockUrl).searchParams.get('login_hint') ?? state.loginAs;
    const code = redirect.url.searchParams.get('code');
    if (code) codeUsers.set(code, hint);
  });
  mock.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }, req: IncomingMessage & { body: Record<string, string> }) => {
    const body = req.body;
    // Only the access token (it carries `scope`); the id_token keeps the mock's own claims.
    if (!Object.hasOwn(token.payload, 'scope')) return;
    const client = basicClient(req, new URLSearchParams(body));
    const audience = body.resource ?? body.audience;
    if (audience) token.payload.aud = audience;
    token.payload.client_id = client;
    if (body.grant_type === 'client_credentials') token.payload.sub = client;
    if (body.grant_type === 'authorization_code') token.payload.sub = codeUsers.get(body.code ?? '') ?? 'nobody';
    if (body.grant_type === 'refresh_token') token.payload.sub = refreshUsers.get(body.refresh_token ?? '') ?? 'nobody';
  });
  mock.service.on('beforeResponse', (response: { body: Record<string, unknown>; statusCode: number }, req: IncomingMessage & { body: Record<string, string> }) => {
    const body = req.body;
    if (body.grant_type === 'refresh_token') {
      const old = body.refresh_token ?? '';
      // Rotation: a refresh token works once; a revoked or spent one is invalid_grant.
      if (state.revoked.has(old) || !refreshUsers.has(old)) {
        response.statusCode = 400;
        response.body = { error: 'invalid_grant', error_description: 'refresh token revoked or already used' };
        return;
      }
      state.revoked.add(old);
      refreshUsers.set(String(response.body.refresh_token), refreshUsers.get(old) ?? 'nobody');
    }
    if (body.grant_type === 'authorization_code') {
      const code = body.code ?? '';
      if (usedCodes.has(code)) {
        response.statusCode = 400;
        response.body = { error: 'invalid_grant', error_description: 'code already used' };
        return;
      }
      usedCodes.add(code);
      refreshUsers.set(String(response.body.refresh_token), codeUsers.get(code) ?? 'nobody');
    }
    if (response.statusCode === 200) {
      response.body.expires_in = state.expiresIn;
      for (const key of ['access_token', 'refresh_token']) if (typeof response.body[key] === 'string') state.issued.push(response.body[key] as string);
    }
  });

  async function tokenExchange(form: URLSearchParams, req: IncomingMessage, res: ServerResponse): Promise<void> {
    let subject: Record<string, unknown>;
    try {
      ({ payload: subject } = await jwtVerify(form.get('subject_token') ?? '', new TextEncoder().encode(options.subjectSecret)));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_grant', error_description: 'subject token not valid' }));
      return;
    }
    const client = basicClient(req, form);
    const audience = form.get('resource') ?? form.get('audience') ?? undefined;
    const token = await mock.issuer.buildToken({
      scopesOrTransform: (_header, payload) => {
        Object.assign(payload, { sub: subject.sub, tenant: subject.tenant, aud: audience, client_id: client, act: { sub: client }, scope: form.get('scope') ?? '' });
      },
    });
    state.issued.push(token);
    res
      .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' })
      .end(JSON.stringify({ access_token: token, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token', token_type: 'Bearer', expires_in: state.expiresIn }));
  }

  async function proxy(req: IncomingMessage, res: ServerResponse, body: string): Promise<void> {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers[name] = value;
    const answer = await fetch(`${mockUrl}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers, redirect: 'manual', ...(req.method === 'POST' ? { body } : {}) });
    const outHeaders: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (!['content-length', 'transfer-encoding', 'content-encoding', 'connection'].includes(name)) outHeaders[name] = value;
    });
    res.writeHead(answer.status, outHeaders).end(Buffer.from(await answer.arrayBuffer()));
  }

  /** The document a URL client id names, when it is one and names that very URL and the redirect URI; else the refusal. */
  async function clientDocument(at: 'authorize' | 'token', clientId: string, redirectUri: string | null): Promise<string | undefined> {
    const fetchDocument = state.clientMetadataFetch;
    if (!fetchDocument) return 'client id metadata documents are not supported here';
    const answer = await fetchDocument(clientId);
    if (answer.status !== 200) return `client metadata document answered ${answer.status}`;
    const document = (await answer.json()) as Record<string, unknown>;
    state.metadataDocuments.push({ at, url: clientId, document });
    if (document.client_id !== clientId) return 'client metadata document names another client_id';
    if (redirectUri !== null && !(Array.isArray(document.redirect_uris) && document.redirect_uris.includes(redirectUri))) return 'redirect_uri is not in the client metadata document';
    return undefined;
  }
  const isUrlClient = (clientId: string | null | undefined): clientId is string => typeof clientId === 'string' && clientId.startsWith('https://');

  const front: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const url = new URL(req.url ?? '/', 'http://front');
      const path = url.pathname;
      if (req.method === 'GET' && path === '/authorize' && isUrlClient(url.searchParams.get('client_id'))) {
        const refused = await clientDocument('authorize', url.searchParams.get('client_id') ?? '', url.searchParams.get('redirect_uri'));
        if (refused) {
          res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_client', error_description: refused }));
          return;
        }
      }
      if (req.method === 'POST' && path === '/token' && isUrlClient(new URLSearchParams(body).get('client_id'))) {
        const form = new URLSearchParams(body);
        state.urlClientCredentials.push(req.headers.authorization !== undefined || form.has('client_secret'));
        const refused = await clientDocument('token', form.get('client_id') ?? '', form.get('redirect_uri'));
        if (refused) {
          res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_client', error_description: refused }));
          return;
        }
      }
      if (req.method === 'POST' && path === '/token') {
        const form = new URLSearchParams(body);
        state.grants.push(form.get('grant_type') ?? '');
        if (state.forgottenClients.has(basicClient(req, form) ?? '')) {
          res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_client', error_description: 'unknown client' }));
          return;
        }
        if (state.mode === 'slow') {
          await new Promise((resolve) => setTimeout(resolve, 3000));
          res.writeHead(503).end();
          return;
        }
        if (state.mode === 'huge') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: 'x'.repeat(5 * 1024 * 1024), token_type: 'Bearer' }));
          return;
        }
        if (state.mode === 'malformed') {
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token": "abc", "token_type": ');
          return;
        }
        if (state.mode === 'error500') {
          res.writeHead(500).end();
          return;
        }
        if (form.get('grant_type') === TOKEN_EXCHANGE) return tokenExchange(form, req, res);
      }
      // RFC 7591 registration, which oauth2-mock-server lacks; its metadata is served here to name the endpoint.
      if (req.method === 'POST' && path === '/register') {
        const request = JSON.parse(body) as Record<string, unknown>;
        const client = { clientId: `registered-${state.registrations.length + 1}`, clientSecret: `registered-secret-${state.registrations.length + 1}` };
        state.registrations.push({ request, ...client });
        await new Promise((resolve) => setTimeout(resolve, state.registrationDelayMs));
        res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ ...request, client_id: client.clientId, client_secret: client.clientSecret }));
        return;
      }
      if (req.method === 'GET' && (path === '/.well-known/openid-configuration' || path === '/.well-known/oauth-authorization-server')) {
        const metadata = (await (await fetch(`${mockUrl}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
        const documents = state.clientMetadataFetch ? { client_id_metadata_document_supported: true } : {};
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...metadata, registration_endpoint: `${state.url}/register`, ...documents, ...state.metadataOverrides }));
        return;
      }
      if (req.method === 'POST' && path === '/revoke') {
        const token = new URLSearchParams(body).get('token');
        if (token) state.revoked.add(token);
        res.writeHead(200).end();
        return;
      }
      await proxy(req, res, body);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((done) => front.listen(0, '127.0.0.1', done));
  state.url = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  state.jwksUrl = `${state.url}/jwks`;
  mock.issuer.url = state.url;
  state.close = async () => {
    front.closeAllConnections();
    await new Promise<void>((done) => front.close(() => done()));
    await mock.stop();
  };
  return state;
}
