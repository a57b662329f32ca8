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

/**
 * The bindings with `statefulIsAuthorized`, the per-call entry, behind a Proxy (issue 48). Node 20's V8 (11.3)
 * inlines a JS→Wasm call into the optimized code of the function that makes it (the engine's `decide`, through
 * the bindings' one-line wrapper), and when that code is deoptimized while Cedar runs (Cedar calls back into
 * JSON.stringify and JSON.parse, and allocates), its deoptimizer cannot hand back the call's externref result:
 * it aborts the process ("unreachable code" in Deoptimizer::DoComputeBuiltinContinuation, exit 133). TurboFan
 * never inlines a call through a Proxy, so the wrapper and its Wasm call run in a frame of their own, whose
 * optimized code has nothing the call can invalidate. About 10 ns per decision; Node 24 does not need it.
 */
function opaque(cedar: Cedar): Cedar {
  return { ...cedar, statefulIsAuthorized: new Proxy(cedar.statefulIsAuthorized, {}) };
}

/** The bindings, loaded once per thread (each worker has its own module and its own preparsed sets). */
export function loadCedar(): Promise<Cedar> {
  return (loading ??= import('@cedar-policy/cedar-wasm/nodejs').then(warm).then(opaque));
}
