// Security-relevant events leave an audit line (docs/security-model.md#audited-security-events): refused
// tokens, unknown tenants, runtime keys created and revoked, user MCP registrations the egress policy
// refused, and MCP params refused before any handler. And an egress refusal tells the caller one sentence,
// whatever the host resolved to, while the log and the operator's audit line say why.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EGRESS_REFUSED } from '../../src/egress/check-egress.js';
import { readAuditLines, type AuditLine } from '../helpers/audit-file.js';
import { API_KEY, bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';
import { createTestStore } from '../helpers/memory-store.js';

// Test hostnames resolve only through this table: one internal name resolves to loopback, one not at all.
const DNS: Record<string, string[]> = { 'loop.internal.test': ['127.0.0.1'], 'db.internal.test': ['10.0.0.7'] };
const resolve = async (host: string): Promise<string[]> => {
  const answer = DNS[host];
  if (!answer) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return answer;
};

let dir: string;
let auditPath: string;
let app: FastifyInstance;
const logs: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tg-security-audit-'));
  auditPath = join(dir, 'audit.log');
  app = await buildTestApp(testConfig({ audit: { sink: 'file', path: auditPath }, admin: { auditRecent: 100 } }), {
    store: createTestStore(),
    resolve,
    logger: { level: 'info', stream: { write: (line: string) => void logs.push(line) } },
  });
});
afterAll(async () => {
  await app?.close();
  await rm(dir, { recursive: true, force: true });
});

type Line = AuditLine;
const auditLines = (): Promise<Line[]> => readAuditLines(app, auditPath);
const securityLines = async (kind: string): Promise<Line[]> => (await auditLines()).filter((line) => line.event === 'security' && line.kind === kind);

const register = async (url: string) =>
  app.inject({ method: 'PUT', url: '/v1/users/alice/mcp-servers/probe', headers: bearer(await signToken({ sub: 'alice' })), payload: { url } });

describe('egress refusals are no DNS oracle', () => {
  it('answers a name that resolves to loopback, one that resolves to a private address and one that does not resolve alike', async () => {
    const answers = await Promise.all(['http://loop.internal.test/mcp', 'http://db.internal.test/mcp', 'http://nowhere.internal.test/mcp'].map(register));
    for (const answer of answers) {
      expect(answer.statusCode).toBe(400);
      expect(answer.json()).toEqual({ statusCode: 400, code: 'TG_EGRESS_DENIED', error: 'Bad Request', message: EGRESS_REFUSED });
    }
    expect(new Set(answers.map((answer) => answer.body)).size).toBe(1);
  });

  it('writes why to the log and to the operator-only part of the audit line, never to the copy tenant admins read', async () => {
    await register('http://loop.internal.test/other');
    const reasons = logs.map((line) => JSON.parse(line) as Line).filter((line) => line.msg === 'user MCP server refused by the egress policy').map((line) => line.reason);
    expect(reasons).toContain('host loop.internal.test resolves to a loopback address');
    expect(reasons).toContain('host nowhere.internal.test could not be resolved');

    const refused = await securityLines('egress_refused');
    expect(refused.map((line) => line.detail)).toEqual(expect.arrayContaining(['host loop.internal.test resolves to a loopback address', 'host nowhere.internal.test could not be resolved']));
    expect(refused[0]).toMatchObject({ tenant: 'acme', user: 'alice', outcome: 'refused', reason: EGRESS_REFUSED, target: 'alice/probe', clientAddress: '127.0.0.1' });

    const copy = (await app.inject({ url: '/v1/admin/audit?outcome=refused', headers: bearer(API_KEY) })).json().events as Line[];
    const copied = copy.filter((event) => event.event === 'security' && event.kind === 'egress_refused');
    expect(copied.length).toBeGreaterThan(0);
    for (const event of copied) expect(event).not.toHaveProperty('detail');
    expect(JSON.stringify(copy)).not.toContain('loopback');
  });
});

describe('audited security events', () => {
  it('audits a refused token with the client address and the reason, never the token', async () => {
    const expired = await signToken({}, { expiresIn: Math.floor(Date.now() / 1000) - 120 });
    const forged = await signToken({}, { secret: 'another-secret-that-is-also-32-bytes-long!' });
    expect((await app.inject({ url: '/v1/tools' })).statusCode).toBe(401);
    expect((await app.inject({ url: '/v1/tools', headers: bearer(expired) })).statusCode).toBe(401);
    expect((await app.inject({ url: '/v1/tools', headers: bearer(forged), remoteAddress: '198.51.100.7' })).statusCode).toBe(401);
    expect((await app.inject({ url: '/v1/tools', headers: bearer('tgk_0123456789abcdef_not-a-real-key-but-token-shaped-xxxxxxxxxxxx') })).statusCode).toBe(401);

    const refused = await securityLines('auth_refused');
    expect(refused.map((line) => line.reason)).toEqual(['missing bearer token', 'token expired', 'invalid token', 'invalid token']);
    expect(refused[2]).toMatchObject({ tenant: null, user: null, outcome: 'refused', clientAddress: '198.51.100.7' });
    expect(refused.every((line) => typeof line.requestId === 'string' && typeof line.clientAddress === 'string')).toBe(true);
    const text = await readFile(auditPath, 'utf8');
    for (const token of [expired, forged]) for (const part of token.split('.')) expect(text).not.toContain(part);
    expect(text).not.toContain('not-a-real-key');
  });

  it('audits a token of a tenant that is not configured, naming that tenant only to the operator', async () => {
    const ghost = await signToken({ tenant: 'ghost', sub: 'casper' });
    const answer = await app.inject({ url: '/v1/tools', headers: bearer(ghost) });
    expect(answer.statusCode).toBe(403);
    expect(answer.json().code).toBe('TG_UNKNOWN_TENANT');
    expect(await securityLines('unknown_tenant')).toEqual([
      expect.objectContaining({ tenant: null, user: 'casper', outcome: 'refused', reason: 'tenant is not configured', detail: 'tenant ghost', clientAddress: '127.0.0.1' }),
    ]);
  });

  it('audits runtime keys created and revoked, with the keys a revocation took with it', async () => {
    const create = (auth: string, payload: Record<string, unknown>) => app.inject({ method: 'POST', url: '/v1/admin/keys', headers: bearer(auth), payload });
    const deputy = (await create(API_KEY, { user: 'deputy', roles: ['admin'] })).json();
    const minted = (await create(deputy.key, { user: 'bot', roles: [] })).json();
    expect((await app.inject({ method: 'DELETE', url: `/v1/admin/keys/${deputy.apiKey.id}`, headers: bearer(API_KEY) })).statusCode).toBe(204);

    const created = await securityLines('key_created');
    expect(created.map((line) => [line.user, line.target])).toEqual([
      ['ci-bot', deputy.apiKey.id],
      ['deputy', minted.apiKey.id],
    ]);
    expect(created[0]).toMatchObject({ tenant: 'acme', outcome: 'ok', reason: 'key for user deputy with roles [admin], until revoked' });
    const revoked = await securityLines('key_revoked');
    expect(revoked).toEqual([expect.objectContaining({ tenant: 'acme', user: 'ci-bot', target: deputy.apiKey.id, reason: `revoked with the 1 key(s) minted below it: ${minted.apiKey.id}` })]);
    const text = await readFile(auditPath, 'utf8');
    expect(text).not.toContain(deputy.key.slice(4));
    expect(text).not.toContain(minted.key.slice(4));
  });

  it('audits resources/read and prompts/get whose params the SDK would refuse unseen, answering -32602', async () => {
    const mcp = async (message: Record<string, unknown>) =>
      app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { ...bearer(await signToken({ sub: 'alice' })), accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
        payload: { jsonrpc: '2.0', id: 7, ...message },
      });
    const read = await mcp({ method: 'resources/read', params: { uri: 42 } });
    expect(read.json()).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32602, message: 'Invalid params: resources/read params.uri must be a string' } });
    const prompt = await mcp({ method: 'prompts/get', params: { name: 'global/x/y', arguments: { n: 1 } } });
    expect(prompt.json().error).toEqual({ code: -32602, message: 'Invalid params: prompts/get params.arguments must be an object of strings' });

    const lines = (await auditLines()).filter((line) => line.event === 'resource_read' || line.event === 'prompt_get');
    expect(lines).toEqual([
      expect.objectContaining({ event: 'resource_read', tenant: 'acme', user: 'alice', via: 'mcp', name: '', service: null, outcome: 'VALIDATION_ERROR', errorType: 'VALIDATION_ERROR' }),
      expect.objectContaining({ event: 'prompt_get', name: 'global/x/y', outcome: 'VALIDATION_ERROR' }),
    ]);
  });
});
