// The child process of src/snapshot/check-in-child.ts: compiles each distinct file tenant of the table it is
// sent, as the start's check does in the gateway, answers once with what the gateway must still compile, and ends.
import { read } from 'node:fs';
import { promisify } from 'node:util';
import { createApprovalService } from '../approvals/service.js';
import { isConfigInvalid } from '../config/error-location.js';
import type { CompactTenantData } from '../config/compact-tenants.js';
import { openCompactTenants } from '../config/load.js';
import type { BuiltinPolicies, PolicyDeps } from '../pipeline/types.js';
import { createMemoryStore } from '../store/memory.js';
import type { CheckAnswer, CheckRequest } from './check-in-child.js';
import { compileTenantParts } from './compile-tenant.js';

// Blocking reads of fd 0 on the thread pool (libuv leaves a child's stdio blocking), so no stream is made of it.
const readAsync = promisify(read);
const readStdin = (into: Uint8Array, at: number, length: number) => readAsync(0, into, at, length, null);

/** The longest the check goes without a turn of the event loop (but for one tenant's compile). */
const TURN_AFTER_MS = 50;

/**
 * Stand-ins for the gateway's shared services: a built-in policy's factory only reads its options and these
 * settings when its layer is made; the store, approvals and audit are used by calls, and none runs here.
 */
function standInDeps(request: CheckRequest): PolicyDeps {
  const store = createMemoryStore();
  return {
    store,
    approvals: createApprovalService({ store }),
    audit: { enabled: request.auditEnabled, write: () => {}, flush: async () => {}, close: async () => {} },
    ...(request.onStoreUnavailable === undefined ? {} : { onStoreUnavailable: request.onStoreUnavailable }),
  };
}

async function check(request: CheckRequest): Promise<CheckAnswer> {
  const { builtinPolicies } = (await import(request.policiesModule)) as { builtinPolicies: BuiltinPolicies };
  const deps = { builtinPolicies, policyDeps: standInDeps(request) };
  const config = { baseDir: request.baseDir, guardrails: request.guardrails };
  const compact = openCompactTenants(await readTable(request.sizes));
  const inCaller: number[] = [];
  let turned = performance.now();
  for (let position = 0; position < compact.size; position += 1) {
    // A compile's awaits are microtasks only: without a turn of the event loop now and then the child would not
    // see its gateway go away ('disconnect') until the whole table was checked.
    if (performance.now() - turned > TURN_AFTER_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      turned = performance.now();
    }
    if (compact.sharesEarlierText(position)) continue;
    try {
      const tenant = compact.freshTenantAt(position);
      // Cedar needs the catalog's tools, a custom policy module the gateway's own services: the caller compiles those.
      if (tenant.cedar !== undefined || tenant.policies.custom !== undefined) {
        inCaller.push(position);
        continue;
      }
      await compileTenantParts(compact.idAt(position), tenant, config, deps, undefined);
    } catch (error) {
      // The caller compiles it again and meets the error itself, named as it names it.
      if (!isConfigInvalid(error)) throw error;
      return { inCaller, failedAt: position };
    }
  }
  return { inCaller, failedAt: -1 };
}

/**
 * The table's buffers from stdin, as the gateway wrote them (src/snapshot/check-in-child.ts), read straight into
 * their places: the stream's chunks (64 KiB each, ~25 MiB at 100,000 texts) gathered and joined held the table
 * twice, and even copied out at once they left ~15 MiB of freed chunks resident in the malloc heap.
 */
async function readTable([indexLength, orderLength, bytesLength]: CheckRequest['sizes']): Promise<CompactTenantData> {
  const index = new Int32Array(indexLength);
  const order = new Int32Array(orderLength);
  const bytes = new Uint8Array(bytesLength);
  for (const part of [new Uint8Array(index.buffer), new Uint8Array(order.buffer), bytes]) {
    for (let at = 0; at < part.byteLength; ) {
      const { bytesRead } = await readStdin(part, at, part.byteLength - at);
      if (bytesRead === 0) throw new Error('the tenant table arrived cut');
      at += bytesRead;
    }
  }
  return { index, order, bytes };
}

// Any error but a configuration's ends the child unanswered: the gateway then checks every tenant itself. A
// gateway that goes away ends it too.
process.once('disconnect', () => process.exit(0));
process.once('message', (request: CheckRequest) => {
  void check(request).then(
    (answer) => process.send!(answer, () => process.exit(0)),
    () => process.exit(1),
  );
});
