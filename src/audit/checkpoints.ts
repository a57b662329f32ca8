import { createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { appendFile } from 'node:fs/promises';
import type { AuditChainConfig, AuditCheckpointSinkConfig } from '../config/types.js';
import type { StateStore } from '../store/types.js';
import { createStoreCheckpointWriter, DEFAULT_STORED_CHECKPOINTS } from './store-checkpoints.js';
import { canonicalJson } from '../shared/canonical-json.js';
import type { AuditChain, ChainHead, ChainObserver } from './chain.js';

/** A signed statement of where one chain stood: one JSON line in the checkpoint place. */
export interface CheckpointRecord {
  type: 'audit_checkpoint';
  chain: string;
  seq: number;
  hash: string;
  prev: string | null;
  /** When it was signed, epoch ms. */
  time: number;
  keyId: string;
  /** Ed25519 over checkpointPayload(record), base64. */
  signature: string;
}

/** What is signed: the record without its signature, as canonical JSON (the same form the chain hashes). */
export function checkpointPayload(record: Omit<CheckpointRecord, 'signature'> & { signature?: string }): Buffer {
  const { signature: _signature, ...signed } = record;
  return Buffer.from(canonicalJson(signed));
}

export interface SigningKey {
  id: string;
  key: KeyObject;
}

/** The key that signs: the first configured one (the others stay in config only to be published). */
export function signingKeyOf(config: AuditChainConfig): SigningKey | undefined {
  const first = config.signing?.keys[0];
  return first ? { id: first.id, key: createPrivateKey(first.privateKey) } : undefined;
}

/** The public keys of every configured signing key, by id (what the online check verifies with). */
export function publicKeysOf(config: AuditChainConfig): Map<string, KeyObject> {
  return new Map((config.signing?.keys ?? []).map(({ id, privateKey }) => [id, createPublicKey(createPrivateKey(privateKey))]));
}

export function signCheckpoint(head: ChainHead, key: SigningKey, time: number): CheckpointRecord {
  const unsigned = { type: 'audit_checkpoint' as const, chain: head.chain, seq: head.seq, hash: head.hash, prev: head.prev, time, keyId: key.id };
  return { ...unsigned, signature: sign(null, checkpointPayload(unsigned), key.key).toString('base64') };
}

/** Appends checkpoints to the second place; rejects when they were not taken. */
export type CheckpointWriter = (records: CheckpointRecord[]) => Promise<void>;

/** Checkpoints as the file and HTTP places hold them: one JSON line each. */
export function checkpointLines(records: readonly CheckpointRecord[]): string {
  return records.map((record) => `${JSON.stringify(record)}\n`).join('');
}

const DEFAULT_HTTP_TIMEOUT_MS = 5000;

export function createCheckpointWriter(config: AuditCheckpointSinkConfig, deps: { store: StateStore }): CheckpointWriter {
  if (config.sink === 'file') {
    const { path } = config;
    return (records) => appendFile(path, checkpointLines(records), { mode: 0o640 });
  }
  if (config.sink === 'store') return createStoreCheckpointWriter(deps.store, config.keep ?? DEFAULT_STORED_CHECKPOINTS);
  const { url } = config;
  const timeoutMs = config.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS;
  return async (records) => {
    const lines = checkpointLines(records);
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: lines, signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
    await response.body?.cancel();
    if (!response.ok) throw new Error(`checkpoint endpoint answered ${response.status}`);
  };
}

export interface CheckpointerOptions {
  chain: AuditChain;
  /** Resolves once every event written so far is in the audit log: a checkpoint never covers an event that is not. */
  flush: () => Promise<void>;
  write: CheckpointWriter;
  key: SigningKey;
  every: number;
  seconds: number;
  onError: (error: unknown) => void;
  now?: () => number;
}

/**
 * Signs each chain's head every `every` events or `seconds` seconds, and once more at close. Runs beside the
 * calls, never awaited by one: a slow or failing checkpoint place delays only the next checkpoint (a failed
 * one is retried with the next, as the heads it missed are still unsigned).
 */
export function createCheckpointer(options: CheckpointerOptions): ChainObserver & { checkpoint(): Promise<void> } {
  const now = options.now ?? Date.now;
  const signedSeq = new Map<string, number>();
  let sinceLast = 0;
  let running: Promise<void> | undefined;
  let again = false;

  const run = async (): Promise<void> => {
    sinceLast = 0;
    const heads = options.chain.heads().filter((head) => signedSeq.get(head.chain) !== head.seq);
    if (heads.length === 0) return;
    try {
      await options.flush();
      const time = now();
      const records = heads.map((head) => signCheckpoint(head, options.key, time));
      await options.write(records);
      for (const head of heads) signedSeq.set(head.chain, head.seq);
    } catch (error) {
      options.onError(error);
    }
  };
  const checkpoint = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = run().finally(() => {
      running = undefined;
      if (again) {
        again = false;
        void checkpoint();
      }
    });
    return running;
  };
  const timer = setInterval(() => void checkpoint(), options.seconds * 1000);
  timer.unref();

  return {
    checkpoint,
    written() {
      sinceLast += 1;
      if (sinceLast >= options.every) void checkpoint();
    },
    async close() {
      clearInterval(timer);
      while (running) await running;
      await run();
    },
  };
}
