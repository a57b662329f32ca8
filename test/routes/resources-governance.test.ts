import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { argumentsHash } from '../../src/audit/events.js';
import { API_KEY, bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';

// Resource reads and prompt gets are governed like tool calls: one audit line each (over /mcp and REST),
// and the tenant's rate limit, whose budget tool calls share.
let app: FastifyInstance;
let baseUrl: string;
let dir: string;
let auditPath: string;

const WELCOME = 'toolgate://local/notes/note://welcome';
const BROKEN = 'toolgate://local/notes/note://broken';
const SECRET = 'toolgate://local/notes/note://secret';
const PROMPT = 'local/notes/summarize';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-catalog-audit-'));
  auditPath = join(dir, 'audit.log');
  app = await buildTestApp(
    testConfig({
      audit: { sink: 'file', path: auditPath },
      mcp: { local: [{ service: 'notes', module: './test/fixtures/mcp/notes-module.mjs' }] },
      tenants: {
        acme: { resources: { deny: ['local/notes/note://secret'] }, policies: { 'rate-limit': { limit: 4, windowMs: 60_000, per: 'user' } } },
        globex: {},
        initech: { policies: { 'rate-limit': { limit: 1, windowMs: 60_000, tools: ['create_*'] } } },
      },
    }),
  );
  await app.ready();
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await app.close();
  await rm(dir, { recursive: true, force: true });
});

const read = (token: string, uri: string) => app.inject({ url: `/v1/resources/read?uri=${encodeURIComponent(uri)}`, headers: bearer(token) });
const prompt = (token: string, name: string, args?: Record<string, string>) =>
  app.inject({ method: 'POST', url: '/v1/prompts/get', headers: bearer(token), payload: { name, ...(args ? { arguments: args } : {}) } });

async function auditLines(): Promise<Array<Record<string, unknown>>> {
  await app.audit.flush();
  const text = await readFile(auditPath, 'utf8');
  return text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
}
const catalogLines = async (user: string) => (await auditLines()).filter((line) => line.user === user && (line.event === 'resource_read' || line.event === 'prompt_get'));

async function mcpClient(token: string): Promise<Client> {
  const client = new Client({ name: 'catalog-audit-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: bearer(token) } }));
  return client;
}

describe('audit of resource reads and prompt gets', () => {
  it('writes one line per REST read or get: the namespaced name, its service and outcome, prompt arguments only hashed, never contents', async () => {
    const alice = await signToken({ sub: 'alice' });
    expect((await read(alice, WELCOME)).json().contents[0].text).toContain('vault code');
    expect((await prompt(alice, PROMPT, { topic: 'the-merger-codename-zebra' })).statusCode).toBe(200);
    expect((await read(alice, BROKEN)).statusCode).toBe(502);
    // Another tenant's or no service, and the tenant's own deny: one answer to the caller, told apart in the audit.
    const unknown = await read(alice, 'toolgate://global/theirs/file:///etc/passwd');
    const denied = await read(alice, SECRET);
    expect([unknown.statusCode, denied.statusCode]).toEqual([404, 404]);
    expect(denied.json().message).toBe(`unknown resource: ${SECRET}`);
    expect((await prompt(alice, 'local/notes/nosuch-but-admitted-by-globs')).statusCode).toBe(502);

    const lines = await catalogLines('alice');
    const base = { msg: 'audit', tenant: 'acme', user: 'alice', via: 'rest', requestId: expect.any(String), durationMs: expect.any(Number) };
    expect(lines).toEqual([
      { ...base, level: 30, time: expect.any(Number), pid: process.pid, hostname: expect.any(String), event: 'resource_read', name: WELCOME, service: 'local/notes', argsSha256: null, outcome: 'ok', errorType: null },
      expect.objectContaining({ ...base, event: 'prompt_get', name: PROMPT, service: 'local/notes', argsSha256: argumentsHash({ topic: 'the-merger-codename-zebra' }), outcome: 'ok', errorType: null }),
      expect.objectContaining({ ...base, event: 'resource_read', name: BROKEN, service: 'local/notes', outcome: 'UPSTREAM_ERROR', errorType: 'UPSTREAM_ERROR' }),
      expect.objectContaining({ ...base, event: 'resource_read', name: 'toolgate://global/theirs/file:///etc/passwd', service: null, outcome: 'UNKNOWN_RESOURCE' }),
      expect.objectContaining({ ...base, event: 'resource_read', name: SECRET, service: 'local/notes', outcome: 'PERMISSION_DENIED', errorType: 'PERMISSION_DENIED' }),
      expect.objectContaining({ ...base, event: 'prompt_get', name: 'local/notes/nosuch-but-admitted-by-globs', argsSha256: argumentsHash({}), outcome: 'UPSTREAM_ERROR' }),
    ]);
    const text = JSON.stringify(lines);
    expect(text).not.toContain('vault code');
    expect(text).not.toContain('zebra');
  });

  it('audits reads and gets over /mcp too, shows them in the recent-audit copy, and keeps them out of the per-tool stats', async () => {
    const carol = await signToken({ sub: 'carol' });
    const client = await mcpClient(carol);
    try {
      await client.readResource({ uri: WELCOME });
      await client.getPrompt({ name: PROMPT, arguments: { topic: 'q3' } });
      await expect(client.readResource({ uri: 'toolgate://local/nosuch/x' })).rejects.toThrow(/unknown resource/);
    } finally {
      await client.close();
    }
    expect((await catalogLines('carol')).map((line) => [line.event, line.via, line.outcome])).toEqual([
      ['resource_read', 'mcp', 'ok'],
      ['prompt_get', 'mcp', 'ok'],
      ['resource_read', 'mcp', 'UNKNOWN_RESOURCE'],
    ]);

    const recent = await app.inject({ url: '/v1/admin/audit?user=carol', headers: bearer(API_KEY) });
    expect(recent.statusCode).toBe(200);
    expect(recent.json().events.map((event: { event: string; name: string }) => [event.event, event.name])).toEqual([
      ['resource_read', 'toolgate://local/nosuch/x'],
      ['prompt_get', PROMPT],
      ['resource_read', WELCOME],
    ]);
    const byOutcome = await app.inject({ url: '/v1/admin/audit?user=carol&outcome=UNKNOWN_RESOURCE', headers: bearer(API_KEY) });
    expect(byOutcome.json().events).toHaveLength(1);
    const stats = (await app.inject({ url: '/v1/admin/stats', headers: bearer(API_KEY) })).json();
    expect(stats.tools).toEqual([]);
  });
});

describe("the tenant's rate limit on reads and gets", () => {
  it('shares the budget of tool calls and refuses reads and gets over it on both wires, before the upstream is asked', async () => {
    const bob = await signToken({ sub: 'bob' });
    const client = await mcpClient(bob);
    try {
      await client.readResource({ uri: WELCOME }); // 1
      expect((await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(bob), payload: { name: 'get_weather', arguments: { city: 'Oslo' } } })).json()).toMatchObject({ ok: true }); // 2
      expect((await prompt(bob, PROMPT, { topic: 'x' })).statusCode).toBe(200); // 3
      expect((await read(bob, WELCOME)).statusCode).toBe(200); // 4
      const readsBefore = (globalThis as { notesReads?: number }).notesReads ?? 0;

      const limited = await read(bob, WELCOME);
      expect(limited.statusCode).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(limited.json()).toMatchObject({ code: 'TG_RATE_LIMITED', message: 'rate limit of 4 calls per 60000 ms exceeded' });
      expect((await prompt(bob, PROMPT, { topic: 'x' })).statusCode).toBe(429);
      await expect(client.readResource({ uri: WELCOME })).rejects.toMatchObject({ code: -32029, data: { errorType: 'RATE_LIMITED', retryAfterMs: expect.any(Number) } });
      expect((globalThis as { notesReads?: number }).notesReads ?? 0).toBe(readsBefore);
      // Names that resolve to nothing are refused before the limit and do not spend it.
      expect((await read(bob, 'toolgate://local/nosuch/x')).statusCode).toBe(404);
    } finally {
      await client.close();
    }
    const outcomes = (await catalogLines('bob')).map((line) => line.outcome);
    expect(outcomes).toEqual(['ok', 'ok', 'ok', 'RATE_LIMITED', 'RATE_LIMITED', 'RATE_LIMITED', 'UNKNOWN_RESOURCE']);
    // Another user of the same tenant has a budget of its own (per: user).
    expect((await read(await signToken({ sub: 'dave' }), WELCOME)).statusCode).toBe(200);
  });

  it('leaves reads and gets unlimited for a tenant without a rate limit, or whose limit counts only other tools', async () => {
    const gina = await signToken({ sub: 'gina', tenant: 'globex' });
    const ivan = await signToken({ sub: 'ivan', tenant: 'initech' });
    for (let i = 0; i < 6; i += 1) {
      expect((await read(gina, WELCOME)).statusCode).toBe(200);
      expect((await prompt(ivan, PROMPT, { topic: 't' })).statusCode).toBe(200);
    }
  });
});
