// Model-visible names for MCP tools (docs/architecture.md#tool-names).
import { shortenName } from '../../registry/tool-names.js';

/**
 * ai4j's `generateApiFunctionName(service, tool)`: join with `_`, replace chars outside [A-Za-z0-9_-]
 * with `_`, collapse `_` runs, strip leading/trailing `_`, then prefix `tool_` when empty or not
 * starting with a letter. toolgate: the prefix comes before the 64 cap, which shortens (never cuts).
 */
export function generateApiFunctionName(service: string, tool: string): string {
  let name = `${service}_${tool}`
    .replace(/[^A-Za-z0-9_-]/g, '_')
    .replace(/_+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (name.length === 0 || !/^[A-Za-z]/.test(name)) name = `tool_${name}`;
  return shortenName(name);
}

/** Global MCP tools keep their upstream names, made legal: chars outside [A-Za-z0-9_-] → `_`, then shortened. */
export function sanitizeUpstreamName(name: string): string {
  const legal = name.replace(/[^A-Za-z0-9_-]/g, '_');
  return shortenName(legal.length > 0 ? legal : '_');
}

/** The exposed ↔ upstream mapping of one provider, so a call on an exposed name reaches the right upstream tool. */
export interface NameMap {
  set(exposed: string, service: string, upstream: string): void;
  upstreamOf(exposed: string): { service: string; tool: string } | undefined;
  exposedOf(service: string, upstream: string): string | undefined;
  delete(exposed: string): void;
  clear(): void;
  readonly size: number;
}

export function createNameMap(): NameMap {
  const forward = new Map<string, { service: string; tool: string }>();
  const backward = new Map<string, string>();
  const key = (service: string, tool: string): string => JSON.stringify([service, tool]);
  return {
    set(exposed, service, upstream) {
      const previous = forward.get(exposed);
      if (previous) backward.delete(key(previous.service, previous.tool));
      forward.set(exposed, { service, tool: upstream });
      backward.set(key(service, upstream), exposed);
    },
    upstreamOf: (exposed) => forward.get(exposed),
    exposedOf: (service, upstream) => backward.get(key(service, upstream)),
    delete(exposed) {
      const previous = forward.get(exposed);
      if (!previous) return;
      forward.delete(exposed);
      backward.delete(key(previous.service, previous.tool));
    },
    clear() {
      forward.clear();
      backward.clear();
    },
    get size() {
      return forward.size;
    },
  };
}
