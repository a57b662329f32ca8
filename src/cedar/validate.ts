// Validates a tenant's policy set against its generated schema in a worker thread with a deadline: parsing
// outside text is the one Cedar step whose cost the text chooses, so it never runs first on the event loop.
import { Worker } from 'node:worker_threads';
import { workerEntry } from '../shared/worker-entry.js';
import { VALIDATE_DEADLINE_MS } from './limits.js';
import type { PolicyReads } from './reads.js';
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
      listing: Record<string, CedarWasm.Policy>;
      /** Ids of the `forbid` policies. */
      forbids: string[];
      /** What the policies read of a request: decisions hand Cedar only that (reads.ts). */
      reads: PolicyReads;
    }
  | { ok: false; problems: ValidationProblem[] };

const ENTRY = workerEntry('./validate-worker', import.meta.url);
/** How long a worker may take to start and compile the module before its deadline starts. */
const STARTUP_MS = 30_000;
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

/** The worker's verdict, or a problem saying it took longer than the deadline (from the module's load on) or failed. */
export async function validateOffThread(request: ValidationRequest, deadlineMs = VALIDATE_DEADLINE_MS): Promise<ValidationReply> {
  const done = await turn();
  try {
    return await new Promise<ValidationReply>((resolve) => {
      // A stack smaller than the event loop's: a set whose parse recursion fits here fits when it is preparsed there.
      const worker = new Worker(ENTRY.entry, { ...ENTRY.options, workerData: request, resourceLimits: { maxOldGenerationSizeMb: 128, stackSizeMb: 0.75 } });
      worker.unref();
      const stop = (message: string) => () => finish({ ok: false, problems: [{ message }] });
      let timer = setTimeout(stop('the Cedar validator did not start'), STARTUP_MS);
      const finish = (reply: ValidationReply): void => {
        clearTimeout(timer);
        void worker.terminate();
        resolve(reply);
      };
      worker.on('message', (reply: ValidationReply | 'loaded') => {
        if (reply !== 'loaded') return finish(reply);
        clearTimeout(timer);
        timer = setTimeout(stop(`parsing and validating the policies took longer than ${deadlineMs} ms`), deadlineMs);
      });
      worker.once('error', (error) => finish({ ok: false, problems: [{ message: `the policies could not be parsed: ${error.message.split('\n', 1)[0]}` }] }));
      worker.once('exit', () => finish({ ok: false, problems: [{ message: 'the policies could not be parsed' }] }));
    });
  } finally {
    done();
  }
}
