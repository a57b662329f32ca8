// RAG end to end through POST /v1/execute: whatever the model sends, a tenant only ever reads its own
// documents, and a token without a bound claim is refused (PERMISSION_DENIED), never given everything.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken, testConfig } from '../../helpers/build.js';

let app: FastifyInstance;
const tokens: Record<string, string> = {};

const RAG_ENTRIES = [
      {
        name: 'knowledge_search',
        description: 'Search the handbook',
        dataset: 'handbook',
        backend: { kind: 'embedded', documents: './test/fixtures/rag/two-tenants.jsonl' },
        topK: { default: 5, max: 20 },
        filter: { tenant: '${principal.tenant}' },
      },
      {
        name: 'department_search',
        description: 'Search your department’s documents',
        backend: { kind: 'embedded', documents: './test/fixtures/rag/two-tenants.jsonl' },
        filter: { tenant: '${principal.tenant}', department: '${claims.department}' },
      },
      {
        name: 'exported_search',
        description: 'Search documents exported from LangChain',
        backend: { kind: 'embedded', documents: './test/fixtures/rag/nested-metadata.jsonl' },
        filter: { tenant: '${principal.tenant}' },
      },
];

beforeAll(async () => {
  app = await buildTestApp(testConfig({ rag: RAG_ENTRIES }));
  tokens.acme = await signToken({ tenant: 'acme', department: 'hr' });
  tokens.globex = await signToken({ tenant: 'globex', sub: 'bob', department: 'engineering' });
  tokens.acmeNoDepartment = await signToken({ tenant: 'acme', sub: 'carol' });
});
afterAll(async () => app.close());

const execute = (token: string, name: string, args: unknown) =>
  app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name, arguments: args } as Record<string, unknown> });

const OTHER = { acme: 'globex', globex: 'acme' } as const;

/** No document text, source or id of the other tenant appears anywhere in the answer. */
function expectNothingOf(tenant: 'acme' | 'globex', payload: string): void {
  expect(payload.toLowerCase()).not.toContain(OTHER[tenant]);
}

// Everything a model might try to widen its scope with: bound keys, dataset, extra keys, JSON strings, __proto__.
const TRICKS: readonly unknown[] = [
  { query: 'vacation', filter: { tenant: 'globex' } },
  { query: 'vacation', filter: {} },
  { query: 'vacation', tenant: 'globex' },
  { query: 'vacation', dataset: 'everything' },
  { query: 'vacation', department: 'engineering', topK: 20 },
  { query: 'vacation', topK: 1000 },
  '{"query":"vacation","filter":{"tenant":"globex"}}',
  '{"query":"vacation","__proto__":{"filter":{"tenant":"globex"}}}',
  '{"query":"vacation","filter":{"__proto__":{"tenant":"globex"}}}',
  '{"query":"vacation","constructor":{"prototype":{"tenant":"globex"}}}',
];

describe('RAG tool through /v1/execute', () => {
  it('shows the model only query and topK', async () => {
    const res = await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(tokens.acme!) });
    const tool = res.json().tools.find((entry: { name: string }) => entry.name === 'knowledge_search');
    expect(Object.keys(tool.inputSchema.properties).sort()).toEqual(['query', 'topK']);
    expect(tool).toMatchObject({ readOnly: true, destructive: false, source: 'rag' });
  });

  it('finds documents whose tenant tag sits under a `metadata` object (LangChain/LlamaIndex exports), for their tenant only', async () => {
    const acme = await execute(tokens.acme!, 'exported_search', { query: 'parental leave' });
    expect(acme.json()).toMatchObject({ ok: true, source: 'rag' });
    expect(acme.json().output).toBe('[S1] Parental leave\nAcme parental leave: 16 weeks, fully paid.');
    const globex = await execute(tokens.globex!, 'exported_search', { query: 'parental leave' });
    expect(globex.json().output).toBe('[S1] parental-leave.md\nGlobex parental leave: 12 weeks.');
  });

  it('answers a sentence, never an empty output, when nothing matches — the same whoever else has a match', async () => {
    const none = await execute(tokens.acme!, 'knowledge_search', { query: 'zeppelin' });
    const otherTenantsOnly = await execute(tokens.acme!, 'exported_search', { query: 'Globex' });
    for (const res of [none, otherTenantsOnly]) {
      expect(res.json()).toMatchObject({ ok: true, output: 'No passages in the knowledge base match this query.', source: 'rag' });
    }
  });

  it('rejects model-sent scope keys and tricks without reading any document', async () => {
    for (const args of TRICKS) {
      const res = await execute(tokens.acme!, 'knowledge_search', args);
      expectNothingOf('acme', res.payload);
      if (res.statusCode === 200) {
        expect(res.json()).toMatchObject({ ok: false, error: { errorType: 'VALIDATION_ERROR' } });
        expect(res.json().trace).toBeNull();
      } else {
        expect(res.statusCode).toBe(400); // a body the JSON parser refuses (e.g. __proto__)
      }
    }
  });

  describe('when a tenant switches the bind-arguments policy off', () => {
    let unbound: FastifyInstance;
    beforeAll(async () => {
      const policiesOff = { policies: { 'bind-arguments': false } };
      unbound = await buildTestApp(testConfig({ rag: RAG_ENTRIES, tenants: { acme: policiesOff, globex: policiesOff } }));
    });
    afterAll(async () => unbound.close());

    it('refuses every search with PERMISSION_DENIED instead of searching without a filter', async () => {
      for (const [token, name] of [[tokens.acme!, 'knowledge_search'], [tokens.globex!, 'department_search']] as const) {
        const res = await unbound.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name, arguments: { query: 'vacation policy' } } });
        expect(res.json()).toMatchObject({ ok: false, error: { errorType: 'PERMISSION_DENIED' }, trace: null });
        expect(res.json().output).not.toMatch(/vacation days/);
      }
    });
  });

  describe('with the filter bound from the token', () => {
    it('gives each tenant only its own documents for every query', async () => {
      for (const tenant of ['acme', 'globex'] as const) {
        for (const query of ['vacation policy', 'expense approval', 'on-call', 'office kitchen calendar', 'secret', 'globex', 'acme']) {
          for (const args of [{ query }, JSON.stringify({ query }), { query, topK: 20 }]) {
            const res = await execute(tokens[tenant]!, 'knowledge_search', args);
            const body = res.json();
            expect(body.ok).toBe(true);
            expect(body.trace.filter).toEqual({ tenant });
            for (const hit of body.trace.retrievedHits) expect(hit.metadata.tenant).toBe(tenant);
            expectNothingOf(tenant, res.payload);
          }
        }
      }
    });

    it('narrows by the department claim', async () => {
      const res = await execute(tokens.acme!, 'department_search', { query: 'vacation' });
      expect(res.json().ok).toBe(true);
      expect(res.json().trace.retrievedHits.map((hit: { id: string }) => hit.id)).toEqual(['acme-vacation']);
    });

    it('refuses a token without the department claim (PERMISSION_DENIED, no documents)', async () => {
      const res = await execute(tokens.acmeNoDepartment!, 'department_search', { query: 'vacation' });
      expect(res.json()).toMatchObject({ ok: false, error: { errorType: 'PERMISSION_DENIED' } });
      expect(res.json().output).not.toMatch(/vacation days|vacation policy/i);
    });

    it('keeps 50 calls in two concurrent batches (one per tenant) apart, each trace matching its own call', async () => {
      const queries = ['vacation', 'expense policy', 'on-call rotation', 'office', 'sick leave'];
      const idsOf = (result: { trace: { retrievedHits: Array<{ id: string }> } }) => result.trace.retrievedHits.map((hit) => hit.id);
      // The expected hits of every (tenant, query), from calls made one at a time.
      const expected = new Map<string, string[]>();
      for (const tenant of ['acme', 'globex'] as const) {
        for (const query of queries) expected.set(`${tenant}:${query}`, idsOf((await execute(tokens[tenant]!, 'knowledge_search', { query })).json()));
      }
      const batchOf = (tenant: 'acme' | 'globex') =>
        app.inject({
          method: 'POST',
          url: '/v1/execute/batch',
          headers: bearer(tokens[tenant]!),
          payload: { step: 1, maxParallel: 25, calls: Array.from({ length: 25 }, (_, i) => ({ name: 'knowledge_search', arguments: { query: queries[i % queries.length] } })) },
        });
      const [acme, globex] = await Promise.all([batchOf('acme'), batchOf('globex')]);
      for (const [tenant, res] of [['acme', acme], ['globex', globex]] as const) {
        expect(res.statusCode).toBe(200);
        const results = res.json().results as Array<{ callId: string; ok: boolean; trace: { filter: unknown; retrievedHits: Array<{ id: string; metadata: { tenant: string } }> } }>;
        expect(results).toHaveLength(25);
        results.forEach((result, i) => {
          expect(result).toMatchObject({ ok: true, callId: `tool_step_1_${i}` });
          expect(result.trace.filter).toEqual({ tenant });
          for (const hit of result.trace.retrievedHits) expect(hit.metadata.tenant).toBe(tenant);
          expect(idsOf(result)).toEqual(expected.get(`${tenant}:${queries[i % queries.length]}`));
        });
        expectNothingOf(tenant, res.payload);
      }
    });

    it('keeps 50 concurrent calls from two tenants apart', async () => {
      const tenants = Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? 'acme' : 'globex') as 'acme' | 'globex');
      const answers = await Promise.all(tenants.map((tenant, i) => execute(tokens[tenant]!, 'knowledge_search', { query: i % 3 ? 'vacation' : 'expense policy' })));
      answers.forEach((res, i) => {
        const tenant = tenants[i]!;
        expect(res.json().trace.filter).toEqual({ tenant });
        for (const hit of res.json().trace.retrievedHits) expect(hit.metadata.tenant).toBe(tenant);
        expectNothingOf(tenant, res.payload);
      });
    });
  });
});
