// The shared stage of the upstream-identity tests: a real authorization server, three MCP upstreams and a
// REST API that verify tokens and answer who called, and a toolgate config that reaches them as
// `jira` (userOAuth), `robot` (clientCredentials), `exch` (tokenExchange) and `wiki` (userOAuth, OpenAPI).
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { GatewayConfig } from '../../../src/config/types.js';
import type { ToolResult } from '../../../src/call/types.js';
import { bearer, buildTestApp, JWT_SECRET, testConfig } from '../../helpers/build.js';
import { startAuthServer, type TestAuthServer } from '../../helpers/oauth-as.js';
import { startWhoamiApi, startWhoamiMcp, whoamiApiDocument, type ProtectedUpstream } from '../../helpers/protected-upstreams.js';

export const PUBLIC_URL = 'https://toolgate.test';
export const AUDIENCES = { jira: 'https://jira.test/mcp', robot: 'https://robot.test/mcp', exch: 'https://exch.test/mcp', wiki: 'https://wiki.test/api' } as const;

export interface Stage {
  as: TestAuthServer;
  jira: ProtectedUpstream;
  robot: ProtectedUpstream;
  exch: ProtectedUpstream;
  wiki: ProtectedUpstream;
  config(overrides?: Record<string, unknown>): GatewayConfig;
  close(): Promise<void>;
}

/** The stage and a gateway on its config listening on a free loopback port; `close` ends both. */
export async function startListeningStage(): Promise<{ stage: Stage; app: FastifyInstance; baseUrl: string; close(): Promise<void> }> {
  const stage = await startStage();
  const app = await buildTestApp(stage.config());
  const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  return { stage, app, baseUrl, close: async () => void (await app.close(), await stage.close()) };
}

export async function startStage(): Promise<Stage> {
  const as = await startAuthServer({ subjectSecret: JWT_SECRET });
  const options = (audience: string) => ({ issuer: as.url, jwksUrl: as.jwksUrl, audience });
  const [jira, robot, exch, wiki] = await Promise.all([
    startWhoamiMcp(options(AUDIENCES.jira)),
    startWhoamiMcp(options(AUDIENCES.robot)),
    startWhoamiMcp(options(AUDIENCES.exch)),
    startWhoamiApi(options(AUDIENCES.wiki)),
  ]);
  const dir = await mkdtemp(join(tmpdir(), 'tg-identity-'));
  const spec = join(dir, 'wiki.json');
  await writeFile(spec, JSON.stringify(whoamiApiDocument(wiki.url)));
  const key = randomBytes(32).toString('base64');
  const auth = (type: string, resource: string, extra: Record<string, unknown> = {}) => ({ type, issuer: as.url, clientId: 'toolgate', clientSecret: 'toolgate-secret', scopes: ['read'], resource, timeoutMs: 1000, ...extra });
  return {
    as,
    jira,
    robot,
    exch,
    wiki,
    config: (overrides = {}) =>
      testConfig({
        server: { publicUrl: PUBLIC_URL },
        credentials: { keys: [{ id: 'k1', key }] },
        egress: { allow: ['127.0.0.1'] },
        mcp: {
          global: [
            { id: 'jira', transport: 'streamable-http', url: jira.url, prefix: true, auth: auth('userOAuth', AUDIENCES.jira) },
            { id: 'robot', transport: 'streamable-http', url: robot.url, prefix: true, auth: auth('clientCredentials', AUDIENCES.robot) },
            { id: 'exch', transport: 'streamable-http', url: exch.url, prefix: true, auth: auth('tokenExchange', AUDIENCES.exch) },
          ],
        },
        openapi: [{ name: 'wiki', spec, auth: auth('userOAuth', AUDIENCES.wiki) }],
        tenants: { acme: { mcpServices: ['jira', 'robot', 'exch'] }, globex: {} },
        ...overrides,
      }),
    async close() {
      await Promise.all([jira.close(), robot.close(), exch.close(), wiki.close()]);
      await as.close();
    },
  };
}

export async function call(app: FastifyInstance, token: string, name: string): Promise<ToolResult> {
  const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name, arguments: {} } });
  return res.json<ToolResult>();
}

/** The identity the upstream saw, from a whoami result. */
export function seen(result: ToolResult): { sub?: string; client_id?: string; aud?: string } {
  if (!result.ok) throw new Error(`call failed: ${result.output}`);
  return JSON.parse(result.output) as { sub?: string; client_id?: string; aud?: string };
}

/** Logs in at the authorization server as `user` (the browser's part) and returns toolgate's callback path. */
export async function authorize(authorizationUrl: string, user: string): Promise<string> {
  const login = new URL(authorizationUrl);
  login.searchParams.set('login_hint', user);
  const answer = await fetch(login, { redirect: 'manual' });
  const location = answer.headers.get('location');
  if (!location) throw new Error(`authorization endpoint answered ${answer.status} without a redirect`);
  const back = new URL(location);
  if (back.origin !== PUBLIC_URL) throw new Error(`redirected to ${back.origin}`);
  return `${back.pathname}${back.search}`;
}

/** The whole connect flow for one user and service; returns the callback's answer. */
export async function connect(app: FastifyInstance, token: string, service: string, user: string): Promise<{ statusCode: number; body: string }> {
  const started = await app.inject({ method: 'POST', url: `/v1/connections/${service}`, headers: bearer(token) });
  if (started.statusCode !== 200) throw new Error(`connect answered ${started.statusCode}: ${started.body}`);
  const callback = await authorize(started.json<{ authorizationUrl: string }>().authorizationUrl, user);
  const done = await app.inject({ url: callback });
  return { statusCode: done.statusCode, body: done.body };
}
