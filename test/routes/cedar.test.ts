import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAuditLines } from '../helpers/audit-file.js';
import { bearer, buildTestApp, scrapeMetrics, signToken, testConfig } from '../helpers/build.js';

const ACME_POLICIES = `
@id("everyone") permit(principal, action, resource);
@id("wire-limit") forbid(principal, action == Action::"call", resource == Tool::"wire")
  when { context.arguments.amount > 1000 && !(principal.roles.contains("treasurer")) };
@id("eu-exports") forbid(principal, action, resource is Tool)
  when { resource.name like "export_*" } unless { principal.claims has region && principal.claims.region == "eu" };
@id("no-notes") forbid(principal, action, resource == Tool::"write_note");
`;

const functions = [{ module: './test/fixtures/functions/basic.mjs' }, { module: './test/fixtures/functions/cedar.mjs' }];
const config = (policies: string, auditPath: string) =>
  testConfig({
    functions,
    audit: { sink: 'file', path: auditPath },
    tenants: {
      // A glob allows everything; Cedar narrows it.
      acme: { tools: { allow: ['*'] }, cedar: { policies, claims: { region: 'String' } } },
      // No Cedar, and a deny glob: the wording of its refusal is the one Cedar's must match.
      globex: { tools: { deny: ['write_note'] } },
    },
  });

let app: FastifyInstance;
let dir: string;
let auditPath: string;
const tokens: Record<string, string> = {};

async function execute(token: string, name: string, args: Record<string, unknown> = {}) {
  const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name, arguments: args, callId: 'c1' } });
  return { status: res.statusCode, body: res.json<Record<string, unknown>>(), text: res.body };
}

async function listed(token: string): Promise<string[]> {
  const res = await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(token) });
  expect(res.statusCode).toBe(200);
  return res.json<{ tools: Array<{ name: string }> }>().tools.map((tool) => tool.name);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-cedar-'));
  auditPath = join(dir, 'audit.jsonl');
  app = await buildTestApp(config(ACME_POLICIES, auditPath));
  tokens.clerk = await signToken({ sub: 'carol', roles: ['clerk'], region: 'us' });
  tokens.treasurer = await signToken({ sub: 'tom', roles: ['clerk', 'treasurer'], region: 'us' });
  tokens.eu = await signToken({ sub: 'eva', roles: ['clerk'], region: 'eu' });
  tokens.globex = await signToken({ sub: 'gil', tenant: 'globex' });
}, 60_000);

afterAll(async () => {
  await app?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('Cedar at listing and execution', () => {
  it('limits an amount by role at execution, and names the policy only in the audit', async () => {
    expect((await execute(tokens.clerk!, 'wire', { amount: 500 })).body).toMatchObject({ ok: true, output: 'wired 500' });
    const refused = await execute(tokens.clerk!, 'wire', { amount: 5000 });
    expect(refused.status).toBe(200);
    expect(refused.body).toMatchObject({ ok: false, error: { errorType: 'PERMISSION_DENIED', error: 'tool is not allowed for this tenant' } });
    expect(refused.text).not.toMatch(/wire-limit|cedar|forbid|policy/i);
    expect((await execute(tokens.treasurer!, 'wire', { amount: 5000 })).body).toMatchObject({ ok: true });

    const lines = await readAuditLines(app, auditPath);
    const wires = lines.filter((line) => line.tool === 'wire' && line.tenant === 'acme');
    expect(wires.map((line) => line.cedar)).toEqual([
      { decision: 'allow', policies: ['everyone'] },
      { decision: 'deny', policies: ['wire-limit'] },
      { decision: 'allow', policies: ['everyone'] },
    ]);
  });

  it('hides a tool from the listing and refuses it when called by name', async () => {
    const usList = await listed(tokens.clerk!);
    expect(usList).not.toContain('export_report');
    expect(usList).toContain('wire');
    expect(await listed(tokens.eu!)).toContain('export_report');
    expect((await execute(tokens.clerk!, 'export_report')).body).toMatchObject({ ok: false, error: { errorType: 'PERMISSION_DENIED' } });
    expect((await execute(tokens.eu!, 'export_report')).body).toMatchObject({ ok: true, output: 'report' });
  });

  it('a forbid beats the glob that allows, in the same words as a deny glob', async () => {
    expect(await listed(tokens.clerk!)).not.toContain('write_note');
    const cedarRefusal = await execute(tokens.clerk!, 'write_note', { text: 'x' });
    const globRefusal = await execute(tokens.globex!, 'write_note', { text: 'x' });
    expect(cedarRefusal.body.error).toEqual(globRefusal.body.error);
    expect(cedarRefusal.body.output).toEqual(globRefusal.body.output);
  });

  it("never touches another tenant: globex has no Cedar and wires any amount", async () => {
    expect((await execute(tokens.globex!, 'wire', { amount: 1_000_000 })).body).toMatchObject({ ok: true });
    expect(await listed(tokens.globex!)).toContain('export_report');
  });

  it('counts decisions by tenant, action and outcome', async () => {
    const text = await scrapeMetrics(app);
    expect(text).toMatch(/toolgate_cedar_decisions_total\{tenant="acme",action="call",outcome="deny"\} [1-9]/);
    expect(text).toMatch(/toolgate_cedar_decisions_total\{tenant="acme",action="list",outcome="deny"\} [1-9]/);
    expect(text).not.toMatch(/toolgate_cedar_decisions_total\{tenant="globex"/);
  });

  it('refuses a reload with a bad set, naming the policy and position, and the old set keeps serving', async () => {
    const typo = `${ACME_POLICIES}\n@id("typo") permit(principal, action == Action::"call", resource) when { context.arguments.amout > 1 };`;
    await expect(app.gateway.reload(config(typo, auditPath))).rejects.toThrow(/\/tenants\/acme\/cedar: policy typo at policies:9:\d+: .*amout/);
    const types = `${ACME_POLICIES}\n@id("types") permit(principal, action == Action::"call", resource) when { context.arguments.memo > 1 };`;
    await expect(app.gateway.reload(config(types, auditPath))).rejects.toThrow(/policy types at policies:9:\d+/);
    expect((await execute(tokens.clerk!, 'wire', { amount: 5000 })).body).toMatchObject({ ok: false, error: { errorType: 'PERMISSION_DENIED' } });
    expect((await execute(tokens.clerk!, 'wire', { amount: 5 })).body).toMatchObject({ ok: true });
  });

  it('explains to a tenant admin which policy lists or holds back each tool for a chosen principal', async () => {
    const admin = await signToken({ sub: 'ada', roles: ['admin'] });
    const explain = async (query: string, token = admin) => app.inject({ method: 'GET', url: `/v1/admin/tools/cedar?${query}`, headers: bearer(token) });
    const us = await explain(`user=zed&roles=clerk&claims=${encodeURIComponent(JSON.stringify({ region: 'us' }))}`);
    expect(us.statusCode).toBe(200);
    const byName = new Map(us.json<{ tools: Array<{ name: string; listed: boolean; policies: string[] }> }>().tools.map((tool) => [tool.name, tool]));
    expect(byName.get('export_report')).toEqual({ name: 'export_report', listed: false, policies: ['eu-exports'] });
    expect(byName.get('write_note')).toEqual({ name: 'write_note', listed: false, policies: ['no-notes'] });
    expect(byName.get('wire')).toEqual({ name: 'wire', listed: true, policies: ['everyone'] });
    // Read-only, tenant admins only, and only their own tenant's policies.
    expect((await explain('user=zed', tokens.clerk!)).statusCode).toBe(403);
    const globexAdmin = await signToken({ sub: 'gad', tenant: 'globex', roles: ['admin'] });
    expect((await explain('user=zed', globexAdmin)).json()).toEqual({ cedar: false, tools: [] });
    expect((await explain('claims=nope')).statusCode).toBe(400);
  });

  it('a 1 MB or deeply nested argument reaches Cedar bounded', async () => {
    // As deep as the structure check lets through (src/execution/arguments.ts), and a string of 900,000 chars.
    let nested: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 60; i += 1) nested = { inner: nested };
    const started = performance.now();
    const deep = await execute(tokens.clerk!, 'wire', { amount: 5, payload: nested, memo: 'x'.repeat(900_000) });
    expect(deep.body, deep.text.slice(0, 300)).toMatchObject({ ok: true });
    expect(performance.now() - started).toBeLessThan(1000);
    // The memo over the cap is not handed over: a forbid reading it errors and refuses (fail closed).
  });
});
