// Cedar's official WebAssembly bindings (@cedar-policy/cedar-wasm, its Node.js entry), loaded on first use:
// a process whose tenants have no Cedar policies never compiles the module.
import type * as CedarWasm from '@cedar-policy/cedar-wasm/nodejs';

export type Cedar = typeof CedarWasm;
export type { CedarWasm };

let loading: Promise<Cedar> | undefined;

/** The bindings, loaded once per thread (each worker has its own module and its own preparsed sets). */
export function loadCedar(): Promise<Cedar> {
  return (loading ??= import('@cedar-policy/cedar-wasm/nodejs'));
}
