// Every call that reaches /v1/execute, the batch endpoint or /mcp tools/call, and every approval decision,
// writes exactly one audit line with its outcome and errorType — refusals before the policy chain included.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAuditLines, type AuditLine } from '../helpers/audit-file.js';
import { bearer, buildTestApp, signToken } from '../helpers/build.js';
import { governedConfig } from '../helpers/governed.js';

let dir: string;
let auditPath: string;
let app: FastifyInstance;
let baseUrl: string;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tg-audit-every-'));
  auditPath = join(dir, 'audit.log');
  app = await buildTestApp(
    governedConfig({
      audit: { sink: 'file', path: auditPath },
      tenants: {
        acme: { roles: { viewer: { deny: ['write_note'] } }, policies: { approval: { tools: ['create_ticket'], expiresMs: 60_000 } } },
        globex: {},
      },
    }),
  );
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  tokens.alice = await signToken({ sub: 'alice' });
  tokens.viewer = await signToken({ sub: 'vera', roles: ['viewer'] });
  tokens.bob = await signToken({ sub: 'bob', roles: ['approver'] });
});
afterAll(async () => {
  await app?.close();
  await rm(dir, { recursive: true, force: true });
});

type Line = AuditLine;
const auditLines = (): Promise<Line[]> => readAuditLines(app, auditPath);

const execute = (who: string, payload: Record<string, unknown>) => app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(tokens[who]!), payload });

describe('audit: one line per call and per approval decision', () => {
  it('writes 8 lines for 8 calls of mixed kinds, each once, with outcome and errorType', async () => {
    const longName = `probe_${'x'.repeat(5000)}`;
    expect((await execute('alice', { name: 'get_weather', arguments: { city: 'Oslo' }, callId: 'k-ok' })).statusCode).toBe(200);
    await execute('alice', { name: 'nobody_has_this', arguments: {}, callId: 'k-unknown' });
    await execute('viewer', { name: 'write_note', arguments: { text: 'x' }, callId: 'k-denied' });
    await execute('alice', { name: 'get_weather', arguments: { town: 'Oslo' }, callId: 'k-invalid' });
    expect((await execute('alice', { name: 'create_ticket', arguments: { title: 'audited' }, callId: 'k-pending' })).statusCode).toBe(202);
    const batch = await app.inject({
      method: 'POST',
      url: '/v1/execute/batch',
      headers: bearer(tokens.alice!),
      payload: { calls: [{ name: 'get_weather', arguments: { city: 'Rome' }, callId: 'k-batch-ok' }, { name: 'get_weather', arguments: '{not json', callId: 'k-batch-bad' }] },
    });
    expect(batch.statusCode).toBe(200);
    const client = new Client({ name: 'audit-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: bearer(tokens.alice!) } }));
    try {
      expect((await client.callTool({ name: longName, arguments: {} })).isError).toBe(true);
    } finally {
      await client.close();
    }

    const lines = (await auditLines()).filter((line) => line.event === 'call');
    expect(lines).toHaveLength(8);
    const byCallId = new Map(lines.map((line) => [line.callId, line]));
    expect(byCallId.get('k-ok')).toMatchObject({ tool: 'get_weather', source: 'function', outcome: 'ok', errorType: null, user: 'alice', tenant: 'acme' });
    expect(byCallId.get('k-unknown')).toMatchObject({ tool: 'nobody_has_this', source: null, outcome: 'UNKNOWN_TOOL', errorType: 'UNKNOWN_TOOL' });
    expect(byCallId.get('k-denied')).toMatchObject({ tool: 'write_note', outcome: 'PERMISSION_DENIED', errorType: 'PERMISSION_DENIED', user: 'vera' });
    expect(byCallId.get('k-invalid')).toMatchObject({ tool: 'get_weather', source: 'function', outcome: 'VALIDATION_ERROR', errorType: 'VALIDATION_ERROR' });
    expect(byCallId.get('k-pending')).toMatchObject({ tool: 'create_ticket', outcome: 'pending_approval', errorType: null, approvalId: expect.any(String) });
    expect(byCallId.get('k-batch-ok')).toMatchObject({ outcome: 'ok' });
    expect(byCallId.get('k-batch-bad')).toMatchObject({ outcome: 'VALIDATION_ERROR', argsSha256: null });
    const mcp = lines.find((line) => String(line.tool).startsWith('probe_'))!;
    expect(mcp).toMatchObject({ outcome: 'UNKNOWN_TOOL', errorType: 'UNKNOWN_TOOL' });
    // The name as sent, bounded: a probe cannot write megabyte lines.
    expect(String(mcp.tool)).toBe(`${longName.slice(0, 128)}…[+${longName.length - 128} chars]`);
    expect(new Set(lines.map((line) => line.callId)).size).toBe(8);
    for (const line of lines) expect(line).toMatchObject({ level: 30, msg: 'audit', time: expect.any(Number), requestId: expect.any(String) });
  });

  it('writes a VALIDATION_ERROR line for an /mcp tools/call refused for its params', async () => {
    const before = (await auditLines()).length;
    const res = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { ...bearer(tokens.alice!), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
    });
    expect(res.json().error.code).toBe(-32602);
    const lines = (await auditLines()).slice(before);
    expect(lines).toEqual([expect.objectContaining({ event: 'call', tool: 'get_weather', outcome: 'VALIDATION_ERROR', errorType: 'VALIDATION_ERROR', user: 'alice' })]);
  });

  it('writes the same line shape from the policy chain, a refusal before it and an /mcp params refusal', async () => {
    const before = (await auditLines()).length;
    await execute('alice', { name: 'get_weather', arguments: { city: 'Oslo' }, callId: 'shape-chain' });
    await execute('alice', { name: 'nobody_has_this', arguments: {}, callId: 'shape-refused' });
    await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { ...bearer(tokens.alice!), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
    });
    const lines = (await auditLines()).slice(before);
    const chain = lines.find((line) => line.callId === 'shape-chain');
    const refused = lines.find((line) => line.callId === 'shape-refused');
    const params = lines.find((line) => line.event === 'call' && line.callId !== 'shape-chain' && line.callId !== 'shape-refused');
    expect([chain?.outcome, refused?.outcome, params?.outcome]).toEqual(['ok', 'UNKNOWN_TOOL', 'VALIDATION_ERROR']);
    const keys = ['event', 'time', 'requestId', 'callId', 'tenant', 'user', 'tool', 'source', 'argsSha256', 'outcome', 'errorType', 'durationMs', 'approvalId'];
    const shape = Object.keys(chain ?? {});
    expect(shape).toEqual(expect.arrayContaining(keys));
    expect(Object.keys(refused ?? {})).toEqual(shape);
    expect(Object.keys(params ?? {})).toEqual(shape);
  });

  it('writes one line per approval decision, with who decided what and the run folded in', async () => {
    const before = (await auditLines()).length;
    const pending = await execute('alice', { name: 'create_ticket', arguments: { title: 'decided' }, callId: 'k-decided' });
    const { approvalId } = pending.json();
    const decide = (who: string, action: 'approve' | 'deny') => app.inject({ method: 'POST', url: `/v1/approvals/${approvalId}/${action}`, headers: bearer(tokens[who]!) });
    expect((await decide('alice', 'approve')).statusCode).toBe(403); // not an approver: refused, and audited
    expect((await decide('bob', 'approve')).statusCode).toBe(200);
    expect((await decide('bob', 'deny')).statusCode).toBe(409); // already decided

    const lines = (await auditLines()).slice(before);
    expect(lines.map((line) => `${line.event}:${line.outcome}`)).toEqual(['call:pending_approval', 'approval:refused', 'approval:ok', 'approval:refused']);
    const [, refused, approved, late] = lines;
    expect(refused).toMatchObject({ decision: 'approve', user: 'alice', approvalId, errorType: 'TG_FORBIDDEN', tool: null });
    expect(approved).toMatchObject({ decision: 'approve', user: 'bob', requester: 'alice', tool: 'create_ticket', callId: 'k-decided', approvalId, errorType: null, msg: 'audit' });
    expect(late).toMatchObject({ decision: 'deny', user: 'bob', errorType: 'TG_CONFLICT' });
  });

  it('records a denial as APPROVAL_DENIED', async () => {
    const pending = await execute('alice', { name: 'create_ticket', arguments: { title: 'denied' }, callId: 'k-denied-ticket' });
    const before = (await auditLines()).length;
    const res = await app.inject({ method: 'POST', url: `/v1/approvals/${pending.json().approvalId}/deny`, headers: bearer(tokens.bob!) });
    expect(res.statusCode).toBe(200);
    const lines = (await auditLines()).slice(before);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ event: 'approval', decision: 'deny', outcome: 'APPROVAL_DENIED', errorType: 'APPROVAL_DENIED', requester: 'alice', tool: 'create_ticket' });
  });
});
