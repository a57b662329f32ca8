import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { stringify } from 'yaml';
import { loadConfigFile } from '../../src/config/load.js';
import { bearer, buildTestApp, JWT_SECRET, signToken } from '../helpers/build.js';

// File tenants whose texts all differ (issue 46, bench/results.md ten28): the start's check compiles each of
// them once without remembering any, yet still refuses a bad one and names it; tenants sharing a text are
// checked once. Read from a YAML file, so the tenants are the table of texts (src/config/compact-tenants.ts).
const apps: FastifyInstance[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function load(tenants: Record<string, unknown>) {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-distinct-tenants-'));
  dirs.push(dir);
  const file = join(dir, 'config.yaml');
  writeFileSync(file, stringify({ auth: { jwt: { secret: JWT_SECRET, issuer: 'https://issuer.test', audience: 'toolgate' } }, audit: { sink: 'off' }, tenants }));
  return loadConfigFile(file, {});
}

const distinct = (count: number): Record<string, unknown> =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`t${i}`, { tools: { deny: [`tool_${i % 3}`] }, policies: { 'rate-limit': { limit: 100 + i, windowMs: 60000 } } }]));

describe('file tenants of all-different texts', () => {
  it('start with none compiled, serve each with its own limit, and refuse a bad one among them', async () => {
    const app = await buildTestApp(await load({ acme: {}, ...distinct(40) }));
    apps.push(app);
    expect(app.gateway.current().tenants.size).toBe(0);
    const listed = await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(await signToken({ tenant: 't39', sub: 'u' })) });
    expect(listed.statusCode).toBe(200);
    expect(app.gateway.current().config.tenants.t39!.policies['rate-limit']).toMatchObject({ limit: 139 });

    await expect(buildTestApp(await load({ acme: {}, ...distinct(40), t40: { policies: { 'rate-limit': { limt: 5 } } } }))).rejects.toThrow(/tenants\/t40.*limt/);
    // A bad one after many that share its neighbours' texts is still compiled: its text is its own.
    const shared = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`s${i}`, { policies: { retry: { attempts: 2 } } }]));
    await expect(buildTestApp(await load({ acme: {}, ...shared, s30: { policies: { retry: { jitter: true } } } }))).rejects.toThrow(/tenants\/s30.*jitter/);
  });

  // At 2,000 distinct texts and more the start's check runs in a child process (src/snapshot/check-in-child.ts);
  // the gateway compiles what the child leaves to it (Cedar here) and the tenant that failed there.
  it('at 2,000 distinct texts are checked in a child process, which still refuses a bad one, in file order', async () => {
    const many = distinct(2_000);
    const cedar = { cedar: { policies: 'permit(principal, action, resource);' } };
    const logs: string[] = [];
    const logger = { level: 'info', stream: { write: (line: string) => void logs.push(line) } };
    const app = await buildTestApp(await load({ acme: {}, ...many, c1: cedar }), { logger });
    apps.push(app);
    expect(logs.filter((line) => line.includes('file tenants checked in a child process'))).toHaveLength(1);
    expect(logs.filter((line) => line.includes('could not be checked in a child process'))).toEqual([]);
    expect(app.gateway.current().tenants.size).toBe(0);
    const listed = await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(await signToken({ tenant: 't1999', sub: 'u' })) });
    expect(listed.statusCode).toBe(200);

    const badLimit = { policies: { 'rate-limit': { limt: 5 } } };
    const badCedar = { cedar: { policies: 'permit(principal, action, resource' } };
    await expect(buildTestApp(await load({ acme: {}, ...many, bad: badLimit }))).rejects.toThrow(/tenants\/bad.*limt/);
    // A bad Cedar tenant (compiled by the gateway) before the bad limit is the one named.
    await expect(buildTestApp(await load({ acme: {}, c0: badCedar, ...many, bad: badLimit }))).rejects.toThrow(/tenants\/c0/);
  }, 120_000);
});
