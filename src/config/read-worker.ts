// The worker of src/config/read-in-worker.ts: reads the file it is given tenant by tenant and answers once.
import { parentPort, workerData } from 'node:worker_threads';
import { isConfigInvalid } from './error-location.js';
import { readByTenant, type FileAt } from './load.js';
import type { ReadAnswer } from './read-in-worker.js';

const { bytes, at } = workerData as { bytes: ArrayBuffer; at: FileAt };
let answer: ReadAnswer;
let moved: ArrayBuffer[] = [];
try {
  const read = readByTenant(Buffer.from(bytes).toString('utf8'), at);
  answer = { read };
  if (read) moved = [read.tenants.bytes, read.tenants.index, read.tenants.order].map((view) => view.buffer as ArrayBuffer);
} catch (error) {
  // Any other error ends the worker unanswered: the caller reads the file itself and meets it there.
  if (!isConfigInvalid(error)) throw error;
  answer = { configError: error.message };
}
parentPort!.postMessage(answer, moved);
