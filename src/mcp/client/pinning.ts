// Rug-pull defence: a tool whose definition changes after first sight is held out until an operator accepts it.
import type { Registry } from 'prom-client';
import { canonicalJson, sha256Hex } from '../../shared/canonical-json.js';
import { createMemoryStore } from '../../store/memory.js';
import type { StateStore } from '../../store/types.js';
import type { Logger } from '../../call/types.js';
import { METRICS, sharedCounter } from '../../observability/metric-table.js';

export interface PinnableTool {
  name: string;
  description?: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
}

/**
 * What the hash covers. `outputSchema` is a key only when the tool declares one: a tool without it hashes
 * exactly as it did before output schemas were pinned, so an upgrade holds none of those for review, while
 * an output schema that appears, changes or goes away is held like an input schema change.
 */
const definitionOf = (tool: PinnableTool): PinnedDefinition => ({
  name: tool.name,
  description: tool.description ?? '',
  inputSchema: tool.inputSchema ?? null,
  ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
});

export function definitionHash(tool: PinnableTool): string {
  return sha256Hex(canonicalJson(definitionOf(tool)));
}

/** A tool definition as it is pinned (what the hash covers), kept so an admin can compare old and new. */
export interface PinnedDefinition {
  name: string;
  description: string;
  inputSchema: unknown;
  /** Present only when the tool declares one. */
  outputSchema?: unknown;
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

/** A held definition as the store keeps it, so any replica can accept it and show it. */
interface StoredHeld {
  current: string;
  definition: PinnedDefinition;
}

export interface PinRegistry {
  /**
   * The tools allowed through; changed ones are held out (and recorded) until accepted. A tool this
   * replica has never seen waits for its pin from a shared store (see `reconcile`), so a fresh replica
   * never trusts a definition another one already holds out.
   */
  filter<T extends PinnableTool>(service: string, tools: readonly T[], options?: { pin?: boolean }): T[];
  /** Loads (or first-sets) the store's pins of these tools; resolves once `filter` can decide them (the caller lists again). */
  reconcile(service: string, tools: readonly PinnableTool[]): Promise<void>;
  /** Accepts the held definition of a tool (held here or on another replica); the entry, or undefined when none is held. */
  accept(service: string, tool: string): Promise<HeldTool | undefined>;
  held(service?: string): HeldTool[];
  /** Per-call check, so it is a map lookup. */
  isHeld(service: string, tool: string): boolean;
  /** Called when a pin changed under `filter` (accepted on another replica, loaded from the store); returns the unsubscribe. */
  onChange(listener: () => void): () => void;
  /** Stops watching the store. */
  close(): void;
}

export interface PinRegistryDeps {
  log: Logger;
  metrics?: Registry;
  /** Where pins and held definitions live: the gateway's state store, shared by replicas with Redis. */
  store?: StateStore;
  /** How often held (and not yet loaded) pins are re-read from the store; default 1000 ms. */
  syncIntervalMs?: number;
}

const pinKey = (service: string, tool: string): string => `pin:${encodeURIComponent(service)}:${encodeURIComponent(tool)}`;
const heldKey = (service: string, tool: string): string => `pin-held:${encodeURIComponent(service)}:${encodeURIComponent(tool)}`;

/**
 * Pins (the accepted definition hash of each upstream tool) and held definitions live in the state store,
 * so with Redis every replica holds the same tools and an operator's accept on one replica releases the
 * tool on all of them: each replica re-reads the pins of the tools it holds every `syncIntervalMs` (only
 * while it holds something). Decisions per listing and per call use this replica's copy of the pins.
 */
export function createPinRegistry(deps: PinRegistryDeps): PinRegistry {
  const store = deps.store ?? createMemoryStore();
  const local = new Map<string, string>();
  const held = new Map<string, HeldTool>();
  // The accepted definitions themselves (the store keeps only hashes), for the side-by-side view of a held tool.
  const definitions = new Map<string, PinnedDefinition>();
  /** Tools seen but whose pin could not be loaded yet (store unreachable): held out, retried by the watcher. */
  const pending = new Map<string, { service: string; tool: PinnableTool }>();
  const listeners = new Set<() => void>();
  const key = (service: string, tool: string): string => JSON.stringify([service, tool]);
  const changed = sharedCounter(deps.metrics, METRICS.toolDefinitionChanged);
  const intervalMs = deps.syncIntervalMs ?? 1000;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const notify = (): void => {
    for (const listener of listeners) listener();
  };
  const storeFailed = (error: unknown, what: string): void => {
    deps.log.warn({ err: error instanceof Error ? error.message : String(error) }, `pin store: ${what} failed; retried`);
  };

  /** The pin of a tool seen for the first time here: the store's, or this definition when nobody pinned one. */
  async function loadPin(service: string, tool: PinnableTool): Promise<string> {
    const current = definitionHash(tool);
    if (await store.setIfAbsent(pinKey(service, tool.name), current)) return current;
    return (await store.get(pinKey(service, tool.name))) ?? current;
  }

  /** Loads the pins of tools not seen here yet; true when any was loaded. */
  async function reconcile(service: string, tools: readonly PinnableTool[]): Promise<boolean> {
    let loaded = false;
    await Promise.all(
      tools.map(async (tool) => {
        const k = key(service, tool.name);
        if (local.has(k)) return;
        try {
          local.set(k, await loadPin(service, tool));
          pending.delete(k);
          loaded = true;
        } catch (error) {
          pending.set(k, { service, tool });
          storeFailed(error, 'loading a pin');
        }
      }),
    );
    watch();
    return loaded;
  }

  /** For pins loaded behind a listing's back (filter, the watcher): the providers list again. */
  async function reconcileThenNotify(service: string, tools: readonly PinnableTool[]): Promise<void> {
    if (await reconcile(service, tools)) notify();
  }

  /** Re-reads the pins of held tools (an accept elsewhere releases them here) and retries pending loads. */
  async function sync(): Promise<void> {
    let moved = false;
    await Promise.all(
      [...held.entries()].map(async ([k, entry]) => {
        try {
          const pinned = await store.get(pinKey(entry.service, entry.tool));
          if (pinned !== null && pinned !== local.get(k)) {
            local.set(k, pinned);
            moved = true;
          }
        } catch (error) {
          storeFailed(error, 'reading a pin');
        }
      }),
    );
    for (const [service, tools] of groupPending()) if (await reconcile(service, tools)) moved = true;
    if (moved) notify();
  }

  /** A held definition recorded by another replica, as this one would hold it. */
  function heldElsewhere(service: string, tool: string, raw: string | null): HeldTool | undefined {
    if (raw === null) return undefined;
    try {
      const record = JSON.parse(raw) as StoredHeld;
      const k = key(service, tool);
      return { service, tool, pinned: local.get(k) ?? '', current: record.current, pinnedDefinition: definitions.get(k) ?? null, currentDefinition: record.definition };
    } catch {
      return undefined;
    }
  }

  function groupPending(): Map<string, PinnableTool[]> {
    const groups = new Map<string, PinnableTool[]>();
    for (const { service, tool } of pending.values()) groups.set(service, [...(groups.get(service) ?? []), tool]);
    return groups;
  }

  function watch(): void {
    const needed = !closed && (held.size > 0 || pending.size > 0);
    if (needed && !timer) {
      timer = setInterval(() => void sync(), intervalMs);
      timer.unref();
    } else if (!needed && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  }

  return {
    filter(service, tools, options = {}) {
      if (options.pin === false) return [...tools];
      const allowed = [];
      const seen = new Set<string>();
      const unseen: PinnableTool[] = [];
      for (const tool of tools) {
        seen.add(tool.name);
        const k = key(service, tool.name);
        const current = definitionHash(tool);
        const pinned = local.get(k);
        if (pinned === undefined) {
          unseen.push(tool);
          continue;
        }
        if (pinned === current) {
          definitions.set(k, definitionOf(tool));
          if (held.delete(k)) void store.delete(heldKey(service, tool.name)).catch((error: unknown) => storeFailed(error, 'clearing a held definition'));
          allowed.push(tool);
          continue;
        }
        const previous = held.get(k);
        if (previous?.current !== current) {
          // Count and log each distinct change once, not once per re-listing.
          changed.inc({ service });
          deps.log.warn({ service, tool: tool.name, pinned, current }, 'upstream tool definition changed; held out until accepted');
          const record: StoredHeld = { current, definition: definitionOf(tool) };
          void store.set(heldKey(service, tool.name), JSON.stringify(record)).catch((error: unknown) => storeFailed(error, 'recording a held definition'));
        }
        held.set(k, { service, tool: tool.name, pinned, current, pinnedDefinition: definitions.get(k) ?? null, currentDefinition: definitionOf(tool) });
      }
      for (const entry of held.values()) if (entry.service === service && !seen.has(entry.tool)) held.delete(key(service, entry.tool));
      if (unseen.length > 0) void reconcileThenNotify(service, unseen);
      watch();
      return allowed;
    },
    async reconcile(service, tools) {
      await reconcile(service, tools);
    },
    async accept(service, tool) {
      const k = key(service, tool);
      // Held here, or only on another replica (its held definition is in the store).
      const accepted = held.get(k) ?? heldElsewhere(service, tool, await store.get(heldKey(service, tool)));
      if (!accepted) return undefined;
      const { current } = accepted;
      await store.set(pinKey(service, tool), current);
      await store.delete(heldKey(service, tool));
      local.set(k, current);
      definitions.set(k, accepted.currentDefinition);
      held.delete(k);
      watch();
      return accepted;
    },
    held: (service) => [...held.values()].filter((entry) => service === undefined || entry.service === service),
    isHeld: (service, tool) => held.size > 0 && held.has(key(service, tool)),
    onChange(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    close() {
      closed = true;
      watch();
    },
  };
}
