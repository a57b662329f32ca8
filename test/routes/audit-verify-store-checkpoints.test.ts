// Checkpoints in the state store, checked online: GET /v1/admin/audit/verify verifies the tenant's newest
// stored checkpoints and compares the events they sign with the recent copy.
import { generateKeyPairSync } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointLines, signCheckpoint } from '../../src/audit/checkpoints.js';
import { checkpointListKey } from '../../src/audit/store-checkpoints.js';
import type { AuditEvent } from '../../src/audit/types.js';
import { verifyRecentCopy } from '../../src/audit/verify-copy.js';
import { API_KEY, bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';

const { privateKey } = generateKeyPairSync('ed25519');
let app: FastifyInstance;

beforeAll(async () => {
  app = await buildTestApp(
    testConfig({
      audit: {
        sink: 'off',
        chain: { checkpointEvery: 1, checkpoints: { sink: 'store', keep: 50 }, signing: { keys: [{ id: 'k1', privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }] } },
      },
    }),
  );
});
afterAll(() => app?.close());

const verify = async () => (await app.inject({ method: 'GET', url: '/v1/admin/audit/verify', headers: bearer(API_KEY) })).json();

describe('GET /v1/admin/audit/verify with checkpoints in the state store', () => {
  it('verifies the stored checkpoints against the copy, and with them names an edited newest event and a checkpoint of an unknown key', async () => {
    const alice = await signToken({ sub: 'alice' });
    for (const city of ['Oslo', 'Rome', 'Lima']) {
      const response = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(alice), payload: { name: 'get_weather', arguments: { city } } });
      expect(response.statusCode).toBe(200);
    }
    const { store } = app;
    const key = checkpointListKey('acme');
    const deadline = Date.now() + 5_000;
    while ((await store.recent(key, 50)).length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    const good = await verify();
    expect(good).toMatchObject({ tenant: 'acme', ok: true, breaks: [] });
    expect(good.checkpoints.valid).toBe(good.checkpoints.checked);
    expect(good.checkpoints.matched).toBeGreaterThanOrEqual(3);

    // The newest event of a chain has no successor whose prev would show a change; only its checkpoint does.
    const kept = (await store.recent('audit-recent:acme', 1000)).map((raw) => JSON.parse(raw) as AuditEvent);
    const newest = kept[0]!;
    const newestSigned = async () => JSON.parse((await app.storedCheckpoints!('acme')).text.trim().split('\n').at(-1)!) as { seq: number };
    while ((await newestSigned()).seq < newest.seq! && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    const signed = await app.storedCheckpoints!('acme');
    expect(await newestSigned()).toMatchObject({ chain: newest.chain, seq: newest.seq });
    const changed = kept.map((event) => (event === newest ? { ...event, user: 'mallory' } : event));
    expect(verifyRecentCopy(changed).ok).toBe(true);
    expect(verifyRecentCopy(changed, signed).breaks).toEqual([expect.objectContaining({ chain: newest.chain, kind: 'edited', seq: newest.seq })]);

    // A checkpoint signed by a key the gateway does not hold.
    const stranger = { id: 'k9', key: generateKeyPairSync('ed25519').privateKey };
    await store.pushCapped(key, checkpointLines([signCheckpoint({ chain: 'forged/acme', seq: 1, hash: 'ab'.repeat(32), prev: null }, stranger, Date.now())]), 50);
    const forged = await verify();
    expect(forged.breaks).toContainEqual(expect.objectContaining({ chain: 'forged/acme', kind: 'unknown-key' }));
  });
});
