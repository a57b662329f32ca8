// Shared test fixtures for the RAG tool: a fake ToolContext and a two-tenant document set whose words overlap.
import { pino } from 'pino';
import type { RagEntry } from '../../../src/config/types.js';
import type { RagDocument } from '../../../src/rag/load-documents.js';
import type { Logger, ToolContext } from '../../../src/call/types.js';
import type { Principal } from '../../../src/call/principal.js';

export function fakeContext(overrides: Partial<ToolContext> & { principal?: Principal } = {}): ToolContext {
  return {
    principal: { tenant: 'acme', user: 'alice', roles: [], claims: {} },
    callId: 'call_test',
    requestId: 'req_test',
    signal: new AbortController().signal,
    log: pino({ level: 'silent' }) as unknown as Logger,
    depth: 0,
    ...overrides,
  };
}

function doc(id: string, tenant: string, department: string | undefined, text: string, extra: Record<string, unknown> = {}): RagDocument {
  return { id, text, source: `${tenant}/${id}.md`, metadata: { tenant, ...(department ? { department } : {}), ...extra } };
}

/** Tenants acme and globex both write about vacation, expenses and on-call, with different content. */
export const TWO_TENANT_DOCS: readonly RagDocument[] = [
  doc('acme-vacation', 'acme', 'hr', 'Acme vacation policy: 28 vacation days per year, unused vacation carries over.', { title: 'Vacation policy', page: 3 }),
  doc('acme-expenses', 'acme', 'finance', 'Acme expense policy: travel expenses up to 500 EUR need no approval.'),
  doc('acme-oncall', 'acme', 'engineering', 'Acme on-call policy: one extra vacation day per on-call week.'),
  doc('acme-office', 'acme', undefined, 'Acme office guide: the vacation calendar hangs in the kitchen.'),
  doc('globex-vacation', 'globex', 'hr', 'Globex vacation policy: 20 vacation days per year, vacation never carries over.', { title: 'Vacation policy' }),
  doc('globex-expenses', 'globex', 'finance', 'Globex expense policy: every travel expense needs approval from finance.'),
  doc('globex-oncall', 'globex', 'engineering', 'Globex on-call policy: an on-call allowance instead of extra vacation.'),
  doc('globex-secret', 'globex', 'engineering', 'Globex secret: vacation vacation vacation policy policy expense on-call office kitchen calendar.'),
];

export const QUERIES = ['vacation policy', 'expense approval', 'on-call', 'office kitchen calendar', 'vacation', 'policy', 'secret', 'globex', 'acme'];

export function ragEntry(overrides: Partial<RagEntry> = {}): RagEntry {
  return {
    name: 'knowledge_search',
    description: 'Search the knowledge base',
    dataset: 'handbook',
    backend: { kind: 'embedded', documents: 'unused' },
    topK: { default: 5, max: 20 },
    filter: { tenant: '${principal.tenant}' },
    ...overrides,
  };
}
