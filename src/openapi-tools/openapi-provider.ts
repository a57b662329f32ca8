// The `openapi:` entries as one tool provider. start() reads every document (a reload builds a new
// provider, so documents are re-read); a document that cannot be read or parsed fails start() with a
// ConfigError naming the entry, so a reload is refused as a whole — the previous snapshot, with the
// old tools, keeps serving and the reload answer (TG_CONFIG_INVALID) and the log say why.
import { ConfigError } from '../config/interpolate.js';
import type { OpenApiEntry, UpstreamAuthConfig } from '../config/types.js';
import type { EgressOptions } from '../egress/check-egress.js';
import { createPinnedFetch } from '../egress/pinned-fetch.js';
import type { ToolProvider, UpstreamStatus } from '../registry/tool-provider.js';
import type { Logger, Tool } from '../call/types.js';
import type { ServiceCredentials } from '../call/upstream-credential.js';
import { fetchDocument, readDocumentFile, type DocumentCache } from './document-source.js';
import { importDocument, type ImportReport } from './import-document.js';
import { parseOpenApiDocument } from './parse-document.js';

export interface OpenApiProviderDeps {
  egress: EgressOptions;
  log: Logger;
  /** Fetched documents by URL, kept across reloads for conditional re-fetching. */
  documents: DocumentCache;
  /** The credentials of an entry with an `auth` object (src/upstream-auth/identity.ts). */
  credentialsFor?: (service: string, auth: UpstreamAuthConfig) => ServiceCredentials;
}

interface Loaded {
  entry: OpenApiEntry;
  tools: Tool[];
  report: ImportReport;
  loadMs: number;
}

export function createOpenApiProvider(entries: readonly OpenApiEntry[], deps: OpenApiProviderDeps): ToolProvider {
  // One egress-guarded fetch for documents and calls: every request is checked and pinned to the checked address.
  const pinned = createPinnedFetch(deps.egress);
  let loaded: Loaded[] = [];
  let tools: Tool[] = [];

  async function load(entry: OpenApiEntry): Promise<Loaded> {
    const started = performance.now();
    const source = entry.url ?? entry.spec ?? '';
    try {
      const text = entry.url ? await fetchDocument(entry.url, pinned.fetch, deps.documents) : await readDocumentFile(source);
      const { document, refused } = await parseOpenApiDocument(text);
      // One operation too large to import never takes the others down: it is left out, said here and counted.
      for (const operation of refused) {
        deps.log.warn({ entry: entry.name, operation: operation.id, method: operation.method, path: operation.path, nodes: operation.nodes }, `OpenAPI operation refused: ${operation.reason}`);
      }
      if (entry.auth && !deps.credentialsFor) throw new Error('auth is configured but no credential source was given');
      const credentials = entry.auth && deps.credentialsFor ? deps.credentialsFor(entry.name, entry.auth) : undefined;
      const imported = importDocument(entry, document, pinned.fetch, { refused, ...(credentials ? { credentials } : {}) });
      return { entry, ...imported, loadMs: Math.round(performance.now() - started) };
    } catch (error) {
      throw new ConfigError(`config /openapi ${entry.name}: document ${source}: ${(error as Error).message}`);
    }
  }

  return {
    kind: 'function',
    tools: () => tools,
    async start() {
      // Forget documents of URLs the config no longer names (the cache outlives providers).
      for (const url of deps.documents.keys()) if (!entries.some((entry) => entry.url === url)) deps.documents.delete(url);
      const next: Loaded[] = [];
      for (const entry of entries) {
        const result = await load(entry);
        deps.log.info({ entry: entry.name, ...result.report, loadMs: result.loadMs }, 'OpenAPI document imported');
        next.push(result);
      }
      loaded = next;
      tools = next.flatMap((result) => result.tools);
    },
    async close() {
      // A reload retires this provider while calls that started on the old snapshot may still be running:
      // its sockets are destroyed only once every such call has hit its own timeout. The timer does not
      // keep the process alive, and idle keep-alive sockets never do.
      const longest = Math.max(0, ...entries.map((entry) => entry.timeoutMs));
      setTimeout(() => pinned.close(), longest + 1000).unref();
    },
    status(): UpstreamStatus[] {
      return loaded.map(({ entry, tools: entryTools, report, loadMs }) => ({
        service: `openapi:${entry.name}`,
        kind: 'openapi',
        state: 'ready',
        required: true,
        toolCount: entryTools.length,
        detail: { source: entry.url ?? entry.spec, ...report, loadMs },
      }));
    },
  };
}
