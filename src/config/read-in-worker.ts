// A large file read at start is read tenant by tenant in a worker: the read's short-lived objects (a few
// hundred bytes per tenant, 100,000 tenants) filled the heap before V8 collected them, and V8 kept those
// pages after the gateway was ready (bench/results.md, issue 46). A worker's heap goes when it ends; the
// gateway gets the validated tenants as one table of texts (src/config/compact-tenants.ts), its buffers moved,
// not copied.
import { Worker } from 'node:worker_threads';
import { workerEntry } from '../shared/worker-entry.js';
import { ConfigError } from './interpolate.js';
import type { FileAt, ReadByTenant } from './load.js';

const ENTRY = workerEntry('./read-worker', import.meta.url);
// The read's objects die young: a small young generation is enough, where Node 24 let it grow to 128 MiB
// (pages the process kept for seconds after the worker ended).
const YOUNG_MB = 8;
// Node 24 keeps a worker's heap pages resident after it ends: its old generation is kept near what the read
// holds (the file's text is outside the heap; its cut pieces and the tenants' ids are in it), so V8 collects
// instead of growing. A file that needs more ends the worker out of memory, and is read in the caller's thread.
const oldGenerationMb = (bytes: number): number => 32 + Math.ceil(bytes / (1024 * 1024));

/** What the worker answers: the file read tenant by tenant (undefined: not cut that way), or the message of the configuration error it found. */
export type ReadAnswer = { readonly read: ReadByTenant | undefined } | { readonly configError: string };

/**
 * `readByTenant` (src/config/load.ts) of `bytes` in a worker, with its errors: the same result and the same
 * ConfigError as the read in this thread. Undefined when the file is not cut that way or the worker fails for
 * any other reason (the caller then reads it here). The bytes move to the worker: do not use them after.
 */
export function readByTenantInWorker(bytes: Buffer, at: FileAt): Promise<ReadByTenant | undefined> {
  // A Buffer of its own memory moves without a copy; one in a shared pool is copied first.
  const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer ? bytes.buffer : Uint8Array.from(bytes).buffer;
  const workerData = { bytes: owned, at: { env: { ...at.env }, baseDir: at.baseDir, source: at.source } };
  return new Promise((resolve, reject) => {
    const worker = new Worker(ENTRY.entry, { ...ENTRY.options, workerData, transferList: [owned], resourceLimits: { maxYoungGenerationSizeMb: YOUNG_MB, maxOldGenerationSizeMb: oldGenerationMb(owned.byteLength) } });
    let answered = false;
    worker.once('message', (answer: ReadAnswer) => {
      answered = true;
      if ('configError' in answer) return reject(new ConfigError(answer.configError));
      resolve(answer.read);
    });
    const unanswered = (): void => {
      if (!answered) resolve(undefined);
      answered = true;
    };
    worker.once('error', unanswered);
    worker.once('exit', unanswered);
  });
}
