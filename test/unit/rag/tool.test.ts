import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { RagBackend, RagFilter } from '../../../src/rag/backend.js';
import { createEmbeddedBackend } from '../../../src/rag/embedded-backend.js';
import { createHttpAgent } from '../../../src/egress/http-client.js';
import { createRagProvider } from '../../../src/rag/rag-provider.js';
import { createRagTool, type RagTrace } from '../../../src/rag/tool.js';
import type { JsonObject, ToolOutput } from '../../../src/call/types.js';

type RagResult = { output: string; trace: RagTrace };
import { fakeContext, ragEntry, TWO_TENANT_DOCS } from './fixtures.js';

async function embeddedTool(entry = ragEntry()) {
  const backend = createEmbeddedBackend({ documents: TWO_TENANT_DOCS });
  await backend.load();
  return { backend, tool: createRagTool(entry, backend) };
}

async function call(tool: ReturnType<typeof createRagTool>, args: JsonObject): Promise<RagResult> {
  return (await tool.handler(args, fakeContext())) as RagResult;
}

function spyBackend(): RagBackend & { search: ReturnType<typeof vi.fn> } {
  return { kind: 'http', search: vi.fn(async () => ({ hits: [], citations: [] })), stats: () => ({ kind: 'http', ready: true }) };
}

describe('createRagTool', () => {
  it('shows the model only query and a capped topK, and binds the filter on the server', async () => {
    const { tool } = await embeddedTool(ragEntry({ topK: { default: 3, max: 7 } }));
    expect(tool.inputSchema).toEqual({
      type: 'object',
      properties: {
        query: expect.objectContaining({ type: 'string' }),
        topK: expect.objectContaining({ type: 'integer', minimum: 1, maximum: 7 }),
      },
      required: ['query'],
      additionalProperties: false,
    });
    expect(tool.bindings).toEqual({ filter: { tenant: '${principal.tenant}' } });
    expect(tool).toMatchObject({ source: 'rag', readOnly: true, idempotent: true, destructive: false, service: 'rag:knowledge_search' });
    expect(tool.isConcurrencySafe({})).toBe(true);
  });

  it('answers numbered passages of the bound tenant only, with a trace beside them', async () => {
    const { tool } = await embeddedTool();
    const { output, trace } = await call(tool, { query: 'vacation policy', filter: { tenant: 'acme' } });
    expect(output.startsWith('[S1] ')).toBe(true);
    expect(output).toContain('Acme vacation policy');
    expect(output).not.toMatch(/Globex/);
    expect(trace).toMatchObject({ filter: { tenant: 'acme' }, dataset: 'handbook', backend: 'embedded', topK: 5 });
    expect(trace.retrievedHits.length).toBeGreaterThan(0);
    for (const hit of trace.retrievedHits) expect(hit.metadata.tenant).toBe('acme');
    expect(trace.citations.map((citation) => citation.citationId)).toEqual(trace.retrievedHits.map((_, i) => `S${i + 1}`));
    expect(trace.rerankedHits).toBeUndefined();
    expect(typeof trace.tookMs).toBe('number');
  });

  it('ignores dataset, tenant or other keys the model slips into the arguments', async () => {
    const { tool } = await embeddedTool();
    const { trace } = await call(tool, { query: 'vacation', filter: { tenant: 'acme' }, tenant: 'globex', dataset: 'other', department: 'hr' });
    expect(trace.dataset).toBe('handbook');
    for (const hit of trace.retrievedHits) expect(hit.metadata.tenant).toBe('acme');
  });

  it.each([
    ['no filter', {}],
    ['a null filter', { filter: null }],
    ['a string filter', { filter: 'acme' }],
    ['a filter with an object value', { filter: { tenant: { $ne: 'nobody' } } }],
    ['a filter without the bound tenant key', { filter: { department: 'hr' } }],
    ['an empty filter', { filter: {} }],
    ['an unresolved template', { filter: { tenant: '${principal.tenant}' } }],
  ])('refuses to search with %s (PERMISSION_DENIED, backend never called)', async (_label, extra) => {
    const backend = spyBackend();
    const tool = createRagTool(ragEntry(), backend);
    await expect(tool.handler({ query: 'vacation', ...extra }, fakeContext())).rejects.toMatchObject({ errorType: 'PERMISSION_DENIED' });
    await expect(tool.handler({ query: '', ...extra }, fakeContext())).rejects.toMatchObject({ errorType: 'PERMISSION_DENIED' });
    expect(backend.search).not.toHaveBeenCalled();
  });

  it('answers a sentence, not an empty output, for an empty query, without searching', async () => {
    const backend = spyBackend();
    const tool = createRagTool(ragEntry(), backend);
    const result = (await tool.handler({ query: '   ', filter: { tenant: 'acme' } }, fakeContext())) as RagResult;
    expect(result.output).toBe('The query is empty: say what to look for in the knowledge base.');
    expect(result.trace).toMatchObject({ retrievedHits: [], citations: [], filter: { tenant: 'acme' } });
    expect(backend.search).not.toHaveBeenCalled();
  });

  it('passes topK within its cap and the call’s own signal to the backend', async () => {
    const backend = spyBackend();
    const tool = createRagTool(ragEntry({ topK: { default: 4, max: 6 } }), backend);
    const ctx = fakeContext();
    await tool.handler({ query: 'q', filter: { tenant: 'acme' } }, ctx);
    await tool.handler({ query: 'q', topK: 2, filter: { tenant: 'acme' } }, ctx);
    await tool.handler({ query: 'q', topK: 99, filter: { tenant: 'acme' } }, ctx);
    expect(backend.search.mock.calls.map((args) => args[2])).toEqual([4, 2, 6]);
    expect(backend.search.mock.calls[0]![3]).toBe(ctx.signal);
  });

  it('reports reranked hits and cites what the output holds', async () => {
    const backend: RagBackend = {
      kind: 'http',
      stats: () => ({ kind: 'http', ready: true }),
      search: async () => {
        const hits = [
          { id: 'a', score: 1, text: `A text ${'a'.repeat(200)}`, source: 'a.md', metadata: { tenant: 'acme' } },
          { id: 'b', score: 2, text: 'B text', source: 'b.md', metadata: { tenant: 'acme' } },
        ];
        const reranked = [hits[1]!, hits[0]!];
        return { hits, reranked, citations: reranked.map((hit, i) => ({ citationId: `S${i + 1}`, sourceName: hit.source, sourcePath: hit.source, sourceUri: null, pageNumber: null, sectionTitle: null, snippet: hit.text })) };
      },
    };
    const tool = createRagTool(ragEntry({ maxResultChars: 100 }), backend);
    const { output, trace } = (await tool.handler({ query: 'q', filter: { tenant: 'acme' } }, fakeContext())) as RagResult;
    expect(output).toMatch(/^\[S1\] b\.md\nB text\n\n\[1 more passage omitted/);
    expect(trace.retrievedHits.map((hit) => hit.id)).toEqual(['a', 'b']);
    expect(trace.rerankedHits!.map((hit) => hit.id)).toEqual(['b', 'a']);
    expect(trace.citations.map((citation) => citation.sourcePath)).toEqual(['b.md']);
  });

  it('keeps 50 concurrent calls from two tenants apart: each trace matches its own filter and hits', async () => {
    const embedded = createEmbeddedBackend({ documents: TWO_TENANT_DOCS });
    await embedded.load();
    // Interleave the calls: each waits a different number of ticks inside the backend before searching.
    let turn = 0;
    const interleaved: RagBackend = {
      kind: 'embedded',
      stats: () => embedded.stats(),
      search: async (query: string, filter: RagFilter, topK: number, signal: AbortSignal) => {
        const ticks = (turn += 7) % 11;
        for (let i = 0; i < ticks; i += 1) await new Promise((resolve) => setImmediate(resolve));
        return embedded.search(query, filter, topK, signal);
      },
    };
    const tool = createRagTool(ragEntry(), interleaved);
    const tenants = Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? 'acme' : 'globex'));
    const results = await Promise.all(
      tenants.map((tenant, i) => tool.handler({ query: i % 3 === 0 ? 'vacation policy' : 'expense on-call vacation', filter: { tenant } }, fakeContext({ callId: `c${i}` }))),
    );
    results.forEach((result, i) => {
      const { output, trace } = result as RagResult;
      const tenant = tenants[i]!;
      const other = tenant === 'acme' ? 'globex' : 'acme';
      expect(trace.filter).toEqual({ tenant });
      expect(trace.retrievedHits.length).toBeGreaterThan(0);
      for (const hit of trace.retrievedHits) expect(hit.metadata.tenant).toBe(tenant);
      for (const citation of trace.citations) expect(citation.sourcePath.startsWith(`${tenant}/`)).toBe(true);
      expect(output.toLowerCase()).not.toContain(other);
    });
    // Traces are separate objects, not one shared "last trace".
    expect(new Set(results.map((result) => (result as ToolOutput).trace)).size).toBe(50);
  });
});

describe('createRagProvider', () => {
  const agent = createHttpAgent();
  afterAll(async () => {
    await agent.close();
  });
  const demoKb = fileURLToPath(new URL('../../../examples/kb.jsonl', import.meta.url));

  it('offers one function tool per entry and loads embedded indexes on start', async () => {
    const provider = createRagProvider([ragEntry({ backend: { kind: 'embedded', documents: demoKb } })], { dispatcher: agent });
    expect(provider.kind).toBe('function');
    expect(provider.tools().map((tool) => tool.name)).toEqual(['knowledge_search']);
    expect(provider.status!()[0]).toMatchObject({ service: 'rag:knowledge_search', kind: 'rag-embedded', state: 'connecting', required: true, toolCount: 1 });
    await provider.start!();
    expect(provider.status!()[0]).toMatchObject({ state: 'ready', detail: expect.objectContaining({ documents: 12, dataset: 'handbook' }) });

    const tool = provider.tools()[0]!;
    for (const tenant of ['demo', 'demo2']) {
      const { output, trace } = (await tool.handler({ query: 'vacation policy', filter: { tenant } }, fakeContext())) as RagResult;
      expect(output).toContain(tenant === 'demo' ? 'Demo Corp' : 'Demo Two Ltd');
      for (const hit of trace.retrievedHits) expect(hit.metadata.tenant).toBe(tenant);
    }
    await provider.close!();
    expect(provider.status!()[0]!.state).toBe('closed');
  });

  it('fails start naming the entry when its documents cannot be loaded', async () => {
    const provider = createRagProvider([ragEntry({ name: 'broken_kb', backend: { kind: 'embedded', documents: '/nonexistent/kb.jsonl' } })], { dispatcher: agent });
    await expect(provider.start!()).rejects.toThrow(/rag "broken_kb"/);
    expect(provider.status!()[0]).toMatchObject({ state: 'down', lastError: expect.stringContaining('ENOENT') });
    await provider.close!();
  });

  it('refuses two entries with the same name', () => {
    expect(() => createRagProvider([ragEntry(), ragEntry()], { dispatcher: agent })).toThrow(/duplicate tool name "knowledge_search"/);
  });

  it('makes http entries that report as optional upstreams', async () => {
    const provider = createRagProvider([ragEntry({ name: 'remote_kb', backend: { kind: 'http', url: 'http://127.0.0.1:9/search', headers: {}, timeoutMs: 1000 } })], { dispatcher: agent });
    await provider.start!();
    expect(provider.status!()[0]).toMatchObject({ service: 'rag:remote_kb', kind: 'rag-http', state: 'ready', required: false });
    await provider.close!();
  });
});
