// Operator-written modules (function tools, local MCP servers, custom policies) often live in the
// operator's own folder, outside toolgate's install, with no node_modules of their own. Their bare imports
// (`@modelcontextprotocol/server`, `zod`) fall back to toolgate's own dependencies.
import { register } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../config/demo.js';

/**
 * An ESM resolve hook, run by Node in its loader thread: a bare specifier that does not resolve from
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

let registered = false;

/** Registers the fallback once per process, before the first operator module is imported. */
function ensureDependencyFallback(): void {
  if (registered) return;
  registered = true;
  register(`data:text/javascript,${encodeURIComponent(RESOLVE_HOOK)}`, { data: { parentURL: pathToFileURL(join(packageRoot(), 'package.json')).href } });
}

/** Imports an operator module by absolute path (`query` busts Node's cache, e.g. `v=<mtime>`). */
export function importUserModule(path: string, query?: string): Promise<unknown> {
  ensureDependencyFallback();
  const url = pathToFileURL(path).href;
  return import(query ? `${url}?${query}` : url);
}
