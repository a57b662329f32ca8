// Operator-written modules (function tools, local MCP servers, custom policies) often live in the
// operator's own folder, outside toolgate's install, with no node_modules of their own. Their bare imports
// (`@modelcontextprotocol/server`, `zod`) fall back to toolgate's own dependencies.
import * as nodeModule from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../config/demo.js';

/**
 * An ESM resolve hook, run by Node in its loader thread where `module.registerHooks` is missing (Node 20;
 * `dependencyFallback` below is the same rule for it): a bare specifier that does not resolve from
 * the importing module's folder resolves as if toolgate's package.json imported it; if that fails too,
 * the original error stands (it names the importing file). Relative and absolute paths, URLs (`node:`,
 * `file:`, `data:`) and `#` subpath imports are never redirected. Handed over as a data: URL, so no
 * separate file has to ship beside the build.
 */
const RESOLVE_HOOK = `
let fallbackParent;
export function initialize(data) { fallbackParent = data.parentURL; }
const BARE = /^(?![./#]|[A-Za-z][A-Za-z0-9+.-]*:)/;
export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !BARE.test(specifier) || context.parentURL === fallbackParent) throw error;
    try {
      return await nextResolve(specifier, { ...context, parentURL: fallbackParent });
    } catch {
      throw error;
    }
  }
}
`;

/** What a resolve step answers (the part this hook reads or passes on). */
interface Resolved {
  readonly url: string;
}
interface ResolveContext {
  readonly parentURL?: string | undefined;
}
type NextResolveSync = (specifier: string, context?: ResolveContext) => Resolved;
/** A synchronous resolve hook, as `module.registerHooks` takes it. */
export type ResolveHookSync = (specifier: string, context: ResolveContext, nextResolve: NextResolveSync) => Resolved;

/** The two ways Node offers to add the hook; `registerHooks` is missing before Node 22.15 (and from @types/node 20). */
export interface ModuleHooksApi {
  readonly register: (specifier: string, options: { data: { parentURL: string } }) => void;
  readonly registerHooks?: (hooks: { resolve: ResolveHookSync }) => unknown;
}

const BARE = /^(?![./#]|[A-Za-z][A-Za-z0-9+.-]*:)/;

/** RESOLVE_HOOK's rule as a synchronous hook, run in the thread that imports. */
export function dependencyFallback(fallbackParent: string): ResolveHookSync {
  return (specifier, context, nextResolve) => {
    try {
      return nextResolve(specifier, context);
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code !== 'ERR_MODULE_NOT_FOUND' || !BARE.test(specifier) || context.parentURL === fallbackParent) throw error;
      try {
        return nextResolve(specifier, { ...context, parentURL: fallbackParent });
      } catch {
        throw error;
      }
    }
  };
}

/**
 * Adds the fallback through `api`. Where Node has `registerHooks` (22.15+, 24) the hook runs in this thread:
 * `register` starts Node's loader thread, a second isolate that stayed for the process's life (~20 MiB of
 * RSS on Node 24; bench/results.md, issue 46). Node 20 has only `register`.
 */
export function addDependencyFallback(api: ModuleHooksApi, fallbackParent: string): 'in-thread' | 'loader-thread' {
  if (api.registerHooks) {
    api.registerHooks({ resolve: dependencyFallback(fallbackParent) });
    return 'in-thread';
  }
  api.register(`data:text/javascript,${encodeURIComponent(RESOLVE_HOOK)}`, { data: { parentURL: fallbackParent } });
  return 'loader-thread';
}

let registered = false;

/** Registers the fallback once per process, before the first operator module is imported. */
function ensureDependencyFallback(): void {
  if (registered) return;
  registered = true;
  addDependencyFallback(nodeModule as ModuleHooksApi, pathToFileURL(join(packageRoot(), 'package.json')).href);
}

/** Imports an operator module by absolute path (`query` busts Node's cache, e.g. `v=<mtime>`). */
export function importUserModule(path: string, query?: string): Promise<unknown> {
  ensureDependencyFallback();
  const url = pathToFileURL(path).href;
  return import(query ? `${url}?${query}` : url);
}
