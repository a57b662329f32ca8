// The checkpointer signs chain heads on its own pace, beside the calls: by count, by time, after a flush,
// once more at close; a failed write is reported and its heads signed with the next checkpoint.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAuditChain } from '../../../src/audit/chain.js';
import { checkpointLines, createCheckpointer, type CheckpointRecord } from '../../../src/audit/checkpoints.js';
import type { AuditEvent } from '../../../src/audit/types.js';
import { verifyAudit } from '../../../src/audit/verify.js';
import { auditLine } from '../../../src/audit/line.js';
import { testConfig } from '../../helpers/build.js';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const key = { id: 'k1', key: privateKey };
const event = (tenant: string | null, n: number): AuditEvent =>
  tenant === null
    ? { event: 'security', time: 1_700_000_000_000 + n, requestId: `r${n}`, kind: 'auth_refused', tenant: null, user: null, clientAddress: '127.0.0.1', outcome: 'refused', reason: 'token expired', target: null }
    : { event: 'audit_read', time: 1_700_000_000_000 + n, requestId: `r${n}`, tenant, user: 'u', via: 'list', filter: {}, outcome: 'ok' };

describe('checkpointer', () => {
  it('signs each moved head every N events, after flushing the log, and once more at close', async () => {
    const chain = createAuditChain('inst');
    const written: string[] = [];
    const order: string[] = [];
    const checkpointer = createCheckpointer({
      chain,
      flush: async () => void order.push('flush'),
      write: async (records) => void (written.push(checkpointLines(records)), order.push('write')),
      key,
      every: 3,
      seconds: 3600,
      onError: (error) => {
        throw error;
      },
    });
    const log: string[] = [];
    const emit = (tenant: string | null, n: number): void => {
      log.push(auditLine(chain.link(event(tenant, n))));
      checkpointer.written();
    };
    emit('acme', 1);
    emit(null, 2);
    emit('acme', 3);
    await checkpointer.checkpoint();
    expect(order.slice(0, 2)).toEqual(['flush', 'write']);
    const first = written.join('').trim().split('\n').map((line) => JSON.parse(line) as CheckpointRecord);
    expect(first.map((record) => [record.chain, record.seq])).toEqual([['inst/acme', 2], ['inst', 1]]);
    emit('acme', 4);
    await checkpointer.close();
    const all = written.join('').trim().split('\n').map((line) => JSON.parse(line) as CheckpointRecord);
    // At close only the chain that moved is signed again.
    expect(all.map((record) => [record.chain, record.seq])).toEqual([['inst/acme', 2], ['inst', 1], ['inst/acme', 3]]);
    const report = verifyAudit({ logs: [{ name: 'log', text: log.join('') }], checkpoints: [{ name: 'cp', text: written.join('') }], publicKeys: new Map([['k1', publicKey]]) });
    expect(report.ok).toBe(true);
    expect(report.chains.map((c) => [c.chain, c.anchoredSeq])).toEqual([['inst', 1], ['inst/acme', 3]]);
  });

  it('signs on time when fewer than N events came, and retries heads a failed write missed', async () => {
    const chain = createAuditChain('inst');
    const written: string[] = [];
    const errors: unknown[] = [];
    let fail = true;
    const checkpointer = createCheckpointer({
      chain,
      flush: async () => {},
      write: async (records) => {
        if (fail) throw new Error('bucket down');
        written.push(checkpointLines(records));
      },
      key,
      every: 1000,
      seconds: 0.05,
      onError: (error) => errors.push(error),
    });
    chain.link(event('acme', 1));
    checkpointer.written();
    const deadline = Date.now() + 5000;
    while (errors.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(errors).toEqual([new Error('bucket down')]);
    fail = false;
    while (written.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(JSON.parse(written[0]!)).toMatchObject({ chain: 'inst/acme', seq: 1, keyId: 'k1' });
    await checkpointer.close();
  });
});

describe('audit.chain config', () => {
  const chainConfig = (chain: Record<string, unknown>) => () => testConfig({ audit: { sink: 'stdout', chain } });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  it('takes checkpoints with signing keys, and refuses one without the other, a twice-declared id, a key that is not Ed25519', () => {
    expect(chainConfig({ checkpoints: { sink: 'file', path: 'cp.log' }, signing: { keys: [{ id: 'k1', privateKey: pem }] } })().audit.chain?.checkpointEvery).toBe(1000);
    expect(chainConfig({})().audit.chain?.checkpointSeconds).toBe(10);
    expect(chainConfig({ checkpoints: { sink: 'file', path: 'cp.log' } })).toThrow(/signing/);
    expect(chainConfig({ signing: { keys: [{ id: 'k1', privateKey: pem }] } })).toThrow(/checkpoints/);
    expect(chainConfig({ checkpoints: { sink: 'file', path: 'cp.log' }, signing: { keys: [{ id: 'k1', privateKey: pem }, { id: 'k1', privateKey: pem }] } })).toThrow(/declared twice/);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(chainConfig({ checkpoints: { sink: 'file', path: 'cp.log' }, signing: { keys: [{ id: 'k1', privateKey: rsa }] } })).toThrow(/Ed25519/);
    expect(chainConfig({ checkpoints: { sink: 'http', url: 'ftp://x' }, signing: { keys: [{ id: 'k1', privateKey: pem }] } })).toThrow();
  });
});
