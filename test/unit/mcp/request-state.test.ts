import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createRequestStateSealer, MAX_REQUEST_STATE_TTL_MS, RequestStateRefused, type RequestStateBinding } from '../../../src/mcp/request-state.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { createRedisStore } from '../../../src/store/redis.js';
import type { StateStore } from '../../../src/store/types.js';
import { createVault } from '../../../src/upstream-auth/vault.js';
import { deleteRedisKeys, testRedisUrl } from '../../helpers/redis.js';

const REDIS_URL = testRedisUrl();
const prefix = `tg-test-request-state:${randomBytes(6).toString('hex')}:`;
afterAll(async () => {
  if (REDIS_URL) await deleteRedisKeys(REDIS_URL, prefix);
});

const key = () => randomBytes(32).toString('base64');
const alice: RequestStateBinding = { tenant: 'acme', user: 'alice', callId: 'call-1' };

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RequestStateRefused) return `${error.code}:${error.reason}`;
    throw error;
  }
  return 'opened';
}

const stores: Array<[string, () => StateStore]> = [['memory', () => createMemoryStore()]];
if (REDIS_URL) stores.push(['redis', () => createRedisStore({ url: REDIS_URL, prefix })]);

describe.each(stores)('a sealed requestState on the %s store', (_kind, makeStore) => {
  const store = makeStore();
  afterAll(() => store.close());
  const vault = createVault({ keys: [{ id: 'k1', key: key() }] });
  let clock = 1_000_000;
  const sealer = createRequestStateSealer({ vault, store, now: () => clock });

  it('opens once for the tenant, user and call it was sealed for, and never shows its payload', async () => {
    const sealed = sealer.seal(alice, 'payload-secret-42', 60_000);
    expect(sealed).not.toContain('payload-secret-42');
    expect(await sealer.open(sealed, alice)).toBe('payload-secret-42');
  });

  it('refuses a replay of a state already taken', async () => {
    const sealed = sealer.seal(alice, 'p', 60_000);
    await sealer.open(sealed, alice);
    expect(await refusal(sealer.open(sealed, alice))).toBe('REQUEST_STATE_REFUSED:replayed');
  });

  it('refuses a state past its expiry', async () => {
    const sealed = sealer.seal(alice, 'p', 1_000);
    clock += 1_001;
    expect(await refusal(sealer.open(sealed, alice))).toBe('REQUEST_STATE_REFUSED:expired');
  });

  it('refuses a tampered state, byte by byte, as invalid', async () => {
    const sealed = sealer.seal(alice, 'p', 60_000);
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3] ?? '', 'base64url');
    for (const at of [0, Math.floor(body.length / 2), body.length - 1]) {
      const flipped = Buffer.from(body);
      flipped[at] = (flipped[at] ?? 0) ^ 1;
      const tampered = [...parts.slice(0, 3), flipped.toString('base64url')].join('.');
      expect(await refusal(sealer.open(tampered, alice))).toBe('REQUEST_STATE_REFUSED:invalid');
    }
    expect(await refusal(sealer.open('not-a-state', alice))).toBe('REQUEST_STATE_REFUSED:invalid');
    expect(await refusal(sealer.open('x'.repeat(20_000), alice))).toBe('REQUEST_STATE_REFUSED:invalid');
    // The untouched state still opens: the refusals claimed nothing.
    expect(await sealer.open(sealed, alice)).toBe('p');
  });

  it("refuses another user's, another tenant's and another call's state exactly as a tampered one, even once it expired", async () => {
    for (const other of [
      { ...alice, user: 'bob' },
      { ...alice, tenant: 'globex' },
      { ...alice, callId: 'call-2' },
    ]) {
      const sealed = sealer.seal(other, 'p', 1_000);
      expect(await refusal(sealer.open(sealed, alice))).toBe('REQUEST_STATE_REFUSED:invalid');
      clock += 2_000;
      expect(await refusal(sealer.open(sealed, alice))).toBe('REQUEST_STATE_REFUSED:invalid');
    }
  });

  it('refuses a state sealed under a key no longer configured, and caps how long any state lives', async () => {
    const foreign = createRequestStateSealer({ vault: createVault({ keys: [{ id: 'k1', key: key() }] }), store, now: () => clock });
    expect(await refusal(sealer.open(foreign.seal(alice, 'p', 60_000), alice))).toBe('REQUEST_STATE_REFUSED:invalid');
    const long = sealer.seal(alice, 'p', 10 * MAX_REQUEST_STATE_TTL_MS);
    clock += MAX_REQUEST_STATE_TTL_MS + 1;
    expect(await refusal(sealer.open(long, alice))).toBe('REQUEST_STATE_REFUSED:expired');
  });
});
