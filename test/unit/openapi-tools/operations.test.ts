import { describe, expect, it } from 'vitest';
import type { OpenApiEntry } from '../../../src/config/types.js';
import type { FetchLike } from '../../../src/egress/pinned-fetch.js';
import { importDocument } from '../../../src/openapi-tools/import-document.js';
import { listOperations, selectOperations } from '../../../src/openapi-tools/operations.js';
import type { OpenApiDocument } from '../../../src/openapi-tools/document.js';

const noFetch: FetchLike = () => Promise.reject(new Error('no network in this test'));
const entry = (overrides: Partial<OpenApiEntry> = {}): OpenApiEntry => ({ name: 'gh', include: ['*'], exclude: [], headers: {}, timeoutMs: 1000, baseUrl: 'https://api.test', ...overrides });
const op = (operationId: string | undefined, extra: object = {}) => ({ ...(operationId ? { operationId } : {}), responses: {}, ...extra });

const document: OpenApiDocument = {
  openapi: '3.1.0',
  paths: {
    '/repos/{owner}': { get: op('repos/get', { tags: ['repos'] }), delete: op('repos/delete', { tags: ['repos'] }) },
    '/issues': { get: op('issues/list', { tags: ['issues'] }), post: op('issues/create-old', { tags: ['issues'], deprecated: true }) },
    '/upload': { post: op('uploads/file', { requestBody: { required: true, content: { 'multipart/form-data': { schema: {} } } } }) },
    '/no-id/{x}': { put: op(undefined) },
  },
};

describe('selecting operations', () => {
  it('matches include/exclude globs on operationId or tag; exclude wins; deprecated only when named exactly', () => {
    const operations = listOperations(document);
    const pick = (include: string[], exclude: string[] = []) => selectOperations(operations, { include, exclude }).selected.map((operation) => operation.id);
    expect(pick(['repos'])).toEqual(['repos/get', 'repos/delete']);
    expect(pick(['repos/*', 'issues'], ['repos/delete'])).toEqual(['repos/get', 'issues/list']);
    expect(pick(['issues/*'])).toEqual(['issues/list']);
    expect(pick(['issues/*', 'issues/create-old'])).toEqual(['issues/list', 'issues/create-old']);
  });

  it('reports what it skipped and why', () => {
    const { report, tools } = importDocument(entry({ exclude: ['repos/delete'] }), document, noFetch);
    expect(report).toMatchObject({ operations: 6, imported: 3, skipped: { excluded: 1, deprecated: 1, 'unsupported request body': 1 }, deferred: false });
    expect(tools.map((tool) => tool.name)).toEqual(['gh_repos_get', 'gh_issues_list', 'gh_put_no-id_x']);
  });
});

describe('naming', () => {
  it('keeps every name within 64 characters and unique, even when operationIds sanitise alike', () => {
    const long = 'a'.repeat(80);
    const doc: OpenApiDocument = {
      openapi: '3.0.3',
      paths: { '/a': { get: op('x.y'), post: op('x/y') }, '/b': { get: op(`${long}1`), post: op(`${long}2`) } },
    };
    const names = importDocument(entry({ name: 'svc' }), doc, noFetch).tools.map((tool) => tool.name);
    expect(names[0]).toBe('svc_x_y');
    expect(names[1]).toMatch(/^svc_x_y_[0-9a-f]{8}$/);
    expect(new Set(names).size).toBe(4);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });

  it('defers past 50 operations unless the entry says otherwise', () => {
    const paths = Object.fromEntries(Array.from({ length: 51 }, (_, index) => [`/p${index}`, { get: op(`op${index}`) }]));
    const doc: OpenApiDocument = { openapi: '3.1.0', paths };
    expect(importDocument(entry(), doc, noFetch).tools.every((tool) => tool.deferLoading)).toBe(true);
    expect(importDocument(entry({ defer: false }), doc, noFetch).tools.some((tool) => tool.deferLoading)).toBe(false);
    expect(importDocument(entry({ defer: true }), { openapi: '3.1.0', paths: { '/x': { get: op('x') } } }, noFetch).tools[0]!.deferLoading).toBe(true);
  });
});
