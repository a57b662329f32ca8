// Checkpoints kept in the state store (`checkpoints: {sink: store}`): one capped list per tenant and one for
// the gateway-wide chains, on the memory store and on Redis, read back by the offline verifier.
import { generateKeyPairSync } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAuditChain } from '../../../src/audit/chain.js';
import { createCheckpointer, createCheckpointWriter } from '../../../src/audit/checkpoints.js';
import { runAuditCli } from '../../../src/audit/cli.js';
import { auditLine } from '../../../src/audit/line.js';
import { checkpointListKey, readStoredCheckpoints } from '../../../src/audit/store-checkpoints.js';
import type { AuditEvent } from '../../../src/audit/types.js';
import { verifyAudit } from '../../../src/audit/verify.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { createRedisStore } from '../../../src/store/redis.js';
import type { StateStore } from '../../../src/store/types.js';
import { boundedRedisClient, deleteRedisKeys, testRedisUrl } from '../../helpers/redis.js';

const REDIS_URL = testRedisUrl();
const prefix = `tg-test:${randomBytes(6).toString('hex')}:`;
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const key = { id: 'k1', key: privateKey };
const publicKeys = new Map([['k1', publicKey]]);

const event = (tenant: string | null, n: number): AuditEvent =>
  tenant === null
    ? { event: 'security', time: 1_700_000_000_000 + n, requestId: `r${n}`, kind: 'auth_refused', tenant: null, user: null, clientAddress: '127.0.0.1', outcome: 'refused', reason: 'token expired', target: null }
    : { event: 'audit_read', time: 1_700_000_000_000 + n, requestId: `r${n}`, tenant, user: 'u', via: 'list', filter: {}, outcome: 'ok' };

/** A replica's chains over `store`: events of acme, globex and gateway-wide, a checkpoint every 2 events. */
async function runReplica(store: StateStore, instance: string, events: number, keep: number): Promise<string[]> {
  const chain = createAuditChain(instance);
  const checkpointer = createCheckpointer({
    chain,
    flush: async () => {},
    write: createCheckpointWriter({ sink: 'store', keep }, { store }),
    key,
    every: 2,
    seconds: 3600,
    onError: (error) => {
      throw error;
    },
  });
  const log: string[] = [];
  const tenants = ['acme', 'glo/bex', null];
  for (let n = 1; n <= events; n += 1) {
    log.push(auditLine(chain.link(event(tenants[n % 3]!, n))));
    checkpointer.written();
    await checkpointer.checkpoint();
  }
  await checkpointer.close();
  return log;
}

const implementations: Array<[string, () => StateStore]> = [['memory', () => createMemoryStore()]];
if (REDIS_URL) implementations.push(['redis', () => createRedisStore({ url: REDIS_URL, prefix })]);

afterAll(async () => {
  if (REDIS_URL) await deleteRedisKeys(REDIS_URL, prefix);
});

describe.each(implementations)('checkpoints in the %s store', (kind, make) => {
  const store = make();
  afterAll(() => store.close());

  it('keeps each tenant\'s and the gateway-wide checkpoints of two replicas in their own lists, which verify the logs', async () => {
    const logA = await runReplica(store, `a${kind}`, 12, 100);
    const logB = await runReplica(store, `b${kind}`, 9, 100);
    const sources = await readStoredCheckpoints(store, ['acme', 'glo/bex', null]);
    expect(sources.map((source) => source.name)).toEqual(['store:audit-checkpoints:tenant:acme', 'store:audit-checkpoints:tenant:glo%2Fbex', 'store:audit-checkpoints:gateway']);
    // A tenant's list holds its chains only (both replicas'), never another tenant's.
    const acme = sources[0]!.text.trim().split('\n').map((line) => JSON.parse(line) as { chain: string });
    expect(new Set(acme.map((record) => record.chain))).toEqual(new Set([`a${kind}/acme`, `b${kind}/acme`]));
    const report = verifyAudit({ logs: [{ name: 'a', text: logA.join('') }, { name: 'b', text: logB.join('') }], checkpoints: sources, publicKeys });
    expect(report.ok).toBe(true);
    expect(report.chains.filter((chain) => chain.chain.startsWith(`a${kind}`)).map((chain) => [chain.chain, chain.anchoredSeq])).toEqual([
      [`a${kind}`, 4],
      [`a${kind}/acme`, 4],
      [`a${kind}/glo/bex`, 4],
    ]);
    // The tail cut after the last checkpoint is named from the stored checkpoints.
    const cut = verifyAudit({ logs: [{ name: 'a', text: logA.slice(0, -3).join('') }], checkpoints: sources, publicKeys });
    expect(cut.ok).toBe(false);
    expect(cut.chains.find((chain) => chain.chain === `a${kind}/acme`)?.break?.kind).toBe('truncated');
  });

  it('keeps at most `keep` checkpoints per list, the newest', async () => {
    const tenant = `capped-${kind}`;
    const chain = createAuditChain(`c${kind}`);
    const write = createCheckpointWriter({ sink: 'store', keep: 3 }, { store });
    const checkpointer = createCheckpointer({ chain, flush: async () => {}, write, key, every: 1, seconds: 3600, onError: (error) => { throw error; } });
    for (let n = 1; n <= 10; n += 1) {
      chain.link(event(tenant, n));
      await checkpointer.checkpoint();
    }
    await checkpointer.close();
    const [source] = await readStoredCheckpoints(store, [tenant], 3);
    expect(source!.text.trim().split('\n').map((line) => (JSON.parse(line) as { seq: number }).seq)).toEqual([8, 9, 10]);
    if (kind === 'redis') {
      const admin = boundedRedisClient(REDIS_URL!);
      try {
        expect(await admin.llen(`${prefix}${checkpointListKey(tenant)}`)).toBe(3);
      } finally {
        admin.disconnect();
      }
    }
  });
});

describe.skipIf(!REDIS_URL)('toolgate audit with checkpoints in Redis', () => {
  it('verify --checkpoints redis://… reads the lists of the tenants in the logs; checkpoints --store prints them', async () => {
    // A prefix of its own: the lists hold only this replica's chains, so every stored checkpoint has its log.
    const own = `${prefix}cli:`;
    const store = createRedisStore({ url: REDIS_URL!, prefix: own });
    const dir = await mkdtemp(join(tmpdir(), 'tg-store-cp-'));
    try {
      const log = await runReplica(store, 'cli', 9, 100);
      await writeFile(join(dir, 'audit.log'), log.join(''));
      await writeFile(join(dir, 'keys.pem'), `# key-id: k1\n${publicKey.export({ type: 'spki', format: 'pem' }).toString()}`);
      const args = ['--log', join(dir, 'audit.log'), '--checkpoints', REDIS_URL!, '--store-prefix', own, '--public-keys', join(dir, 'keys.pem')];
      const ok = await runAuditCli(['verify', ...args]);
      expect(ok.stdout).toMatch(/^chain cli\/acme: OK; 3 events, 3 verified, anchored to seq 3/m);
      expect(ok.exitCode).toBe(0);
      await writeFile(join(dir, 'audit.log'), log.slice(0, -1).join(''));
      const cut = await runAuditCli(['verify', ...args]);
      expect(cut.exitCode).toBe(1);
      expect(cut.stdout).toMatch(/BROKEN truncated/);
      const exported = await runAuditCli(['checkpoints', '--store', REDIS_URL!, '--store-prefix', own, '--tenant', 'acme']);
      const chains = new Set(exported.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { chain: string }).chain));
      expect([...chains].sort()).toEqual(['cli', 'cli/acme']);
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
