// The RAG tool provider: one tool per config `rag` entry, each over its own backend.
import type { Dispatcher } from 'undici';
import type { RagEntry } from '../config/types.js';
import type { ToolProvider, UpstreamStatus } from '../registry/tool-provider.js';
import type { Tool } from '../call/types.js';
import type { RagBackend } from './backend.js';
import { createEmbeddedBackend, type EmbeddedBackend } from './embedded-backend.js';
import { createHttpBackend } from './http-backend.js';
import { createRagTool, type RagToolDeps } from './tool.js';

export interface RagProviderDeps extends RagToolDeps {
  /** The gateway's shared undici pool for http backends (owned and closed by the gateway). */
  dispatcher: Dispatcher;
}

export interface RagProvider extends ToolProvider {
  /** Rebuilds every embedded index in place (the old ones serve until the new ones are ready). */
  reload(): Promise<void>;
}

interface Slot {
  entry: RagEntry;
  backend: RagBackend;
  embedded?: EmbeddedBackend;
  tool: Tool;
}

async function loadAll(slots: readonly Slot[]): Promise<void> {
  await Promise.all(
    slots.map(async ({ entry, embedded }) => {
      try {
        await embedded?.load();
      } catch (error) {
        throw new Error(`rag "${entry.name}": cannot load its documents: ${(error as Error).message}`, { cause: error });
      }
    }),
  );
}

export function createRagProvider(entries: readonly RagEntry[], deps: RagProviderDeps): RagProvider {
  const names = new Set<string>();
  for (const entry of entries) {
    if (names.has(entry.name)) throw new Error(`rag: duplicate tool name "${entry.name}"`);
    names.add(entry.name);
  }
  const slots: Slot[] = entries.map((entry) => {
    const spec = entry.backend;
    if (spec.kind === 'embedded') {
      const embedded = createEmbeddedBackend({ documents: spec.documents });
      return { entry, backend: embedded, embedded, tool: createRagTool(entry, embedded, deps) };
    }
    const backend = createHttpBackend({
      url: spec.url,
      headers: spec.headers,
      timeoutMs: spec.timeoutMs,
      ...(entry.dataset !== undefined ? { dataset: entry.dataset } : {}),
      dispatcher: deps.dispatcher,
    });
    return { entry, backend, tool: createRagTool(entry, backend, deps) };
  });
  const tools = Object.freeze(slots.map((slot) => slot.tool));
  let closed = false;

  return {
    kind: 'function',
    tools: () => tools,
    start: () => loadAll(slots),
    reload: () => loadAll(slots),
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all(slots.map((slot) => slot.backend.close?.()));
    },
    status(): UpstreamStatus[] {
      return slots.map(({ entry, backend }) => {
        const stats = backend.stats();
        const state: UpstreamStatus['state'] = closed ? 'closed' : stats.ready ? 'ready' : stats.lastError ? 'down' : 'connecting';
        return {
          service: `rag:${entry.name}`,
          kind: `rag-${backend.kind}`,
          state,
          // An embedded index is part of this process: without it the tool cannot answer at all.
          required: backend.kind === 'embedded',
          toolCount: 1,
          ...(stats.lastError ? { lastError: stats.lastError } : {}),
          detail: { ...stats, dataset: entry.dataset ?? null },
        };
      });
    },
  };
}
