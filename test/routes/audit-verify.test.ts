// The admin audit routes with the chain on: reading the audit is itself audited, GET /v1/admin/audit/verify
// checks the recent copy's links, and checkpoints can go to an HTTP endpoint the operator names.
import { generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAudit } from '../../src/audit/verify.js';
import { readAuditLines } from '../helpers/audit-file.js';
import { API_KEY, bearer, buildTestApp, OPERATOR_KEY, signToken, testConfig } from '../helpers/build.js';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
let dir: string;
let collector: Server;
let received = '';
let app: FastifyInstance;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tg-audit-verify-'));
  collector = createServer((request, response) => {
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (received += chunk));
    request.on('end', () => response.writeHead(204).end());
  });
  collector.listen(0, '127.0.0.1');
  await once(collector, 'listening');
  const address = collector.address() as { port: number };
  app = await buildTestApp(
    testConfig({
      audit: {
        sink: 'file',
        path: join(dir, 'audit.log'),
        chain: { checkpointEvery: 3, checkpoints: { sink: 'http', url: `http://127.0.0.1:${address.port}/checkpoints`, timeoutMs: 2000 }, signing: { keys: [{ id: 'k1', privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }] } },
      },
    }),
  );
});
afterAll(async () => {
  await app?.close();
  collector?.close();
  await rm(dir, { recursive: true, force: true });
});

const readAuditLinesOf = (gateway: FastifyInstance) => readAuditLines(gateway, join(dir, 'audit.log'));

const execute = async (token: string, city: string): Promise<void> => {
  const response = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name: 'get_weather', arguments: { city } } });
  expect(response.statusCode).toBe(200);
};

describe('admin audit routes with the chain on', () => {
  it('writes an audit_read event (who, which tenant, which filter) into the chain of the tenant read', async () => {
    const alice = await signToken({ sub: 'alice' });
    await execute(alice, 'Oslo');
    const read = await app.inject({ method: 'GET', url: '/v1/admin/audit?user=alice&limit=10', headers: bearer(API_KEY) });
    expect(read.statusCode).toBe(200);
    expect(read.json().events[0]).toMatchObject({ event: 'call', user: 'alice', seq: 1, prev: null });
    const operatorRead = await app.inject({ method: 'GET', url: '/v1/admin/audit?tenant=globex', headers: bearer(OPERATOR_KEY) });
    expect(operatorRead.statusCode).toBe(200);
    const again = await app.inject({ method: 'GET', url: '/v1/admin/audit?limit=2', headers: bearer(API_KEY) });
    expect(again.json().events[0]).toMatchObject({ event: 'audit_read', tenant: 'acme', user: 'ci-bot', via: 'list', filter: { user: 'alice', limit: 10 }, seq: 2 });
    const globex = await app.inject({ method: 'GET', url: '/v1/admin/audit?tenant=globex&limit=1', headers: bearer(OPERATOR_KEY) });
    // globex's admin learns that an operator read its audit, not which tenant or user that was; the log has it.
    const operatorEvent = globex.json().events[0];
    expect(operatorEvent).toMatchObject({ event: 'audit_read', tenant: 'globex', user: 'operator', filter: { limit: 100 } });
    expect(JSON.stringify(operatorEvent)).not.toMatch(/acme|ops/);
    const lines = (await readAuditLinesOf(app)).filter((line) => line.event === 'audit_read' && line.tenant === 'globex');
    expect(lines[0]).toMatchObject({ user: 'operator', detail: 'tenant acme, user ops' });
  });

  it('writes one audit_read line a minute for the same reader and filter (the console polls), another for another filter', async () => {
    const before = (await readAuditLinesOf(app)).filter((line) => line.event === 'audit_read').length;
    for (let i = 0; i < 5; i += 1) expect((await app.inject({ method: 'GET', url: '/v1/admin/audit?user=bob&limit=7', headers: bearer(API_KEY) })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/v1/admin/audit?user=carol&limit=7', headers: bearer(API_KEY) })).statusCode).toBe(200);
    const reads = (await readAuditLinesOf(app)).filter((line) => line.event === 'audit_read').slice(before);
    expect(reads.map((line) => (line.filter as { user: string }).user)).toEqual(['bob', 'carol']);
  });

  it('GET /v1/admin/audit/verify: OK on the untouched copy, names a removed event in a tampered one', async () => {
    const alice = await signToken({ sub: 'alice' });
    for (const city of ['Rome', 'Paris', 'Lima']) await execute(alice, city);
    const good = await app.inject({ method: 'GET', url: '/v1/admin/audit/verify', headers: bearer(API_KEY) });
    expect(good.statusCode).toBe(200);
    const body = good.json();
    expect(body).toMatchObject({ tenant: 'acme', ok: true, unchained: 0, breaks: [] });
    expect(body.chains).toEqual([expect.objectContaining({ firstSeq: 1, events: body.events })]);
    // Someone with store access adds an event that claims a later place in the chain: the ones before it are missing.
    const { store } = app;
    const [newest] = (await store.recent('audit-recent:acme', 1, 0)).map((raw) => JSON.parse(raw) as { seq: number });
    await store.pushCapped('audit-recent:acme', JSON.stringify({ ...newest, user: 'mallory', seq: newest!.seq + 2 }), 1000);
    const bad = await app.inject({ method: 'GET', url: '/v1/admin/audit/verify', headers: bearer(API_KEY) });
    expect(bad.json()).toMatchObject({ ok: false, breaks: [{ kind: 'removed', seq: newest!.seq + 2 }] });
  });

  it('sends signed checkpoints to the HTTP endpoint; they verify the file log', async () => {
    await app.close();
    const report = verifyAudit({
      logs: [{ name: 'audit.log', text: await readFile(join(dir, 'audit.log'), 'utf8') }],
      checkpoints: [{ name: 'http', text: received }],
      publicKeys: new Map([['k1', publicKey]]),
    });
    expect(report.breaks).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.checkpoints.valid).toBeGreaterThan(0);
    for (const chain of report.chains) expect(chain.anchoredSeq).toBe(chain.lastSeq);
  });
});
