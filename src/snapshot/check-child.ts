// The child process of src/snapshot/check-in-child.ts: compiles each distinct file tenant of the table it is
// sent, as the start's check does in the gateway, answers once with what the gateway must still compile, and ends.
import { createApprovalService } from '../approvals/service.js';
import { isConfigInvalid } from '../config/error-location.js';
import type { CompactTenantData } from '../config/compact-tenants.js';
import { openCompactTenants } from '../config/load.js';
import type { BuiltinPolicies, PolicyDeps } from '../pipeline/types.js';
import { createMemoryStore } from '../store/memory.js';
import type { CheckAnswer, CheckRequest } from './check-in-child.js';
import { compileTenantParts } from './compile-tenant.js';

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
  for (let position = 0; position < compact.size; position += 1) {
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

/** The table's buffers from stdin, as the gateway wrote them (src/snapshot/check-in-child.ts). */
async function readTable([indexLength, orderLength, bytesLength]: CheckRequest['sizes']): Promise<CompactTenantData> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const all = Buffer.concat(chunks);
  const index = new Int32Array(indexLength);
  const order = new Int32Array(orderLength);
  if (all.byteLength !== index.byteLength + order.byteLength + bytesLength) throw new Error('the tenant table arrived cut');
  new Uint8Array(index.buffer).set(all.subarray(0, index.byteLength));
  new Uint8Array(order.buffer).set(all.subarray(index.byteLength, index.byteLength + order.byteLength));
  return { index, order, bytes: all.subarray(index.byteLength + order.byteLength) };
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
