// Validates a tenant's policy set against its generated schema in a worker thread with a deadline: parsing
// outside text is the one Cedar step whose cost the text chooses, so it never runs first on the event loop.
import { Worker } from 'node:worker_threads';
import { workerEntry } from '../shared/worker-entry.js';
import { VALIDATE_DEADLINE_MS } from './limits.js';
import type { CedarWasm } from './wasm.js';

export interface ValidationRequest {
  text: string;
  schema: CedarWasm.SchemaJson<string>;
}

export interface ValidationProblem {
  /** The policy it is about (its `@id`, or Cedar's `policyN`), when Cedar says. */
  policy?: string | undefined;
  message: string;
  help?: string | undefined;
  /** Offset into the text where Cedar points, when it does. */
  offset?: number | undefined;
}

export type ValidationReply =
  | {
      ok: true;
      /** Each policy's text by its id (its `@id` annotation, or Cedar's `policyN`). */
      policies: Record<string, string>;
      /** The listing form of each policy that takes part in listing (listing-set.ts). */
      listing: Record<string, CedarWasm.PolicyJson>;
      /** Ids of the `forbid` policies. */
      forbids: string[];
    }
  | { ok: false; problems: ValidationProblem[] };

const ENTRY = workerEntry('./validate-worker', import.meta.url);
/** Validations running at once in the process; more wait their turn (a tenant cannot start a hundred workers). */
const MAX_RUNNING = 2;
let running = 0;
const waiting: Array<() => void> = [];

async function turn(): Promise<() => void> {
  if (running >= MAX_RUNNING) await new Promise<void>((resolve) => waiting.push(resolve));
  running += 1;
  return () => {
    running -= 1;
    waiting.shift()?.();
  };
}

/** The worker's verdict, or a problem saying it took longer than the deadline or failed. */
export async function validateOffThread(request: ValidationRequest, deadlineMs = VALIDATE_DEADLINE_MS): Promise<ValidationReply> {
  const done = await turn();
  try {
    return await new Promise<ValidationReply>((resolve) => {
      const worker = new Worker(ENTRY.entry, { ...ENTRY.options, workerData: request, resourceLimits: { maxOldGenerationSizeMb: 128, stackSizeMb: 4 } });
      worker.unref();
      const timer = setTimeout(() => {
        void worker.terminate();
        resolve({ ok: false, problems: [{ message: `parsing and validating the policies took longer than ${deadlineMs} ms` }] });
      }, deadlineMs);
      const finish = (reply: ValidationReply): void => {
        clearTimeout(timer);
        void worker.terminate();
        resolve(reply);
      };
      worker.once('message', (reply: ValidationReply) => finish(reply));
      worker.once('error', (error) => finish({ ok: false, problems: [{ message: `the policies could not be parsed: ${error.message.split('\n', 1)[0]}` }] }));
      worker.once('exit', () => finish({ ok: false, problems: [{ message: 'the policies could not be parsed' }] }));
    });
  } finally {
    done();
  }
}
