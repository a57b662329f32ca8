// Cedar's official WebAssembly bindings (@cedar-policy/cedar-wasm, its Node.js entry), loaded on first use:
// a process whose tenants have no Cedar policies never compiles the module.
import type * as CedarWasm from '@cedar-policy/cedar-wasm/nodejs';

export type Cedar = typeof CedarWasm;
export type { CedarWasm };

let loading: Promise<Cedar> | undefined;

/**
 * V8 compiles a WebAssembly function on its first call, on the calling thread: the first decision of a process
 * spent 1.5 s of event-loop time compiling Cedar's evaluator (measured on this 2-core machine at a load average
 * of 30). One decision against a one-policy set right after loading moves that once-per-process cost to the
 * first load (at start-up, for the file's tenants), out of the first call's way.
 */
function warm(cedar: Cedar): Cedar {
  const id = '\u0000toolgate-warm-up';
  cedar.preparsePolicySet(id, { staticPolicies: 'permit(principal, action, resource) when { context.n > 1 && principal.roles.contains("x") };' });
  const request = { principal: { type: 'User', id: 'u' }, action: { type: 'Action', id: 'call' }, resource: { type: 'Tool', id: 't' }, context: { n: 2 } };
  const entities = [{ uid: { type: 'User', id: 'u' }, attrs: { roles: ['x'] }, parents: [] }];
  cedar.statefulIsAuthorized({ ...request, preparsedPolicySetId: id, entities });
  cedar.preparsePolicySet(id, { staticPolicies: '' });
  return cedar;
}

/** The bindings, loaded once per thread (each worker has its own module and its own preparsed sets). */
export function loadCedar(): Promise<Cedar> {
  return (loading ??= import('@cedar-policy/cedar-wasm/nodejs').then(warm));
}
