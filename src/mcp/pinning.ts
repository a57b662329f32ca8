// Rug-pull defence: a tool whose definition changes after first sight is held out until an admin accepts it.
import type { Registry } from 'prom-client';
import { canonicalJson, sha256Hex } from '../registry/canonical-json.js';
import type { Logger } from '../types.js';
import { counterIn } from './metrics.js';

export interface PinnableTool {
  name: string;
  description?: string;
  inputSchema?: unknown;
}

/** Where pins live; memory today, the StateStore later (hence async-free and tiny). */
export interface PinStore {
  get(service: string, tool: string): string | undefined;
  set(service: string, tool: string, hash: string): void;
}

export function createMemoryPinStore(): PinStore {
  const pins = new Map<string, string>();
  const key = (service: string, tool: string): string => JSON.stringify([service, tool]);
  return {
    get: (service, tool) => pins.get(key(service, tool)),
    set: (service, tool, hash) => void pins.set(key(service, tool), hash),
  };
}

const definitionOf = (tool: PinnableTool): PinnedDefinition => ({ name: tool.name, description: tool.description ?? '', inputSchema: tool.inputSchema ?? null });

export function definitionHash(tool: PinnableTool): string {
  return sha256Hex(canonicalJson(definitionOf(tool)));
}

/** A tool definition as it is pinned (what the hash covers), kept so an admin can compare old and new. */
export interface PinnedDefinition {
  name: string;
  description: string;
  inputSchema: unknown;
}

export interface HeldTool {
  service: string;
  tool: string;
  pinned: string;
  current: string;
  /** The definition tenants saw (null when it was pinned before this process started, e.g. a shared pin store). */
  pinnedDefinition: PinnedDefinition | null;
  currentDefinition: PinnedDefinition;
}

export interface PinRegistry {
  /** Returns the tools allowed through; changed ones are held out (and recorded) until accepted. */
  filter<T extends PinnableTool>(service: string, tools: readonly T[], options?: { pin?: boolean }): T[];
  /** Accepts the currently held definition of a tool; returns false when nothing was held. */
  accept(service: string, tool: string): boolean;
  held(service?: string): HeldTool[];
  /** Per-call check, so it is a map lookup. */
  isHeld(service: string, tool: string): boolean;
}

export interface PinRegistryDeps {
  log: Logger;
  metrics?: Registry;
  store?: PinStore;
}

export function createPinRegistry(deps: PinRegistryDeps): PinRegistry {
  const store = deps.store ?? createMemoryPinStore();
  const held = new Map<string, HeldTool>();
  // The accepted definitions themselves (the store keeps only hashes), for the side-by-side view of a held tool.
  const definitions = new Map<string, PinnedDefinition>();
  const key = (service: string, tool: string): string => JSON.stringify([service, tool]);
  const changed = counterIn(
    deps.metrics,
    'toolgate_tool_definition_changed_total',
    'Upstream tool definitions that changed after they were pinned (held out until accepted)',
    ['service'],
  );

  return {
    filter(service, tools, options = {}) {
      if (options.pin === false) return [...tools];
      const allowed = [];
      const seen = new Set<string>();
      for (const tool of tools) {
        seen.add(tool.name);
        const current = definitionHash(tool);
        const pinned = store.get(service, tool.name);
        if (pinned === undefined) store.set(service, tool.name, current);
        if (pinned === undefined || pinned === current) {
          definitions.set(key(service, tool.name), definitionOf(tool));
          held.delete(key(service, tool.name));
          allowed.push(tool);
          continue;
        }
        const previous = held.get(key(service, tool.name));
        if (previous?.current !== current) {
          // Count and log each distinct change once, not once per re-listing.
          changed.inc({ service });
          deps.log.warn({ service, tool: tool.name, pinned, current }, 'upstream tool definition changed; held out until accepted');
        }
        held.set(key(service, tool.name), {
          service,
          tool: tool.name,
          pinned,
          current,
          pinnedDefinition: definitions.get(key(service, tool.name)) ?? null,
          currentDefinition: definitionOf(tool),
        });
      }
      for (const entry of held.values()) if (entry.service === service && !seen.has(entry.tool)) held.delete(key(service, entry.tool));
      return allowed;
    },
    accept(service, tool) {
      const entry = held.get(key(service, tool));
      if (!entry) return false;
      store.set(service, tool, entry.current);
      definitions.set(key(service, tool), entry.currentDefinition);
      held.delete(key(service, tool));
      return true;
    },
    held: (service) => [...held.values()].filter((entry) => service === undefined || entry.service === service),
    isHeld: (service, tool) => held.size > 0 && held.has(key(service, tool)),
  };
}
