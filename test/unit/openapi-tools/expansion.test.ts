import { describe, expect, it } from 'vitest';
import { boundExpansion } from '../../../src/openapi-tools/expansion.js';
import { parseOpenApiDocument } from '../../../src/openapi-tools/parse-document.js';
import { createSchemaValidator } from '../../../src/execution/schema-validator.js';
import { canonicalJson } from '../../../src/shared/canonical-json.js';

/** Each level names the next `width` times: width^levels leaves from a few hundred bytes. */
function fanOut(levels: number, prefix = '#/components/schemas/L', width = 4): Record<string, unknown> {
  const schemas: Record<string, unknown> = { L0: { type: 'string' } };
  for (let level = 1; level <= levels; level += 1) {
    const next = { $ref: `${prefix}${level - 1}` };
    schemas[`L${level}`] = { type: 'object', properties: Object.fromEntries(Array.from({ length: width }, (_, i) => [`p${i}`, next])) };
  }
  return schemas;
}

const body = (ref: string) => ({ requestBody: { content: { 'application/json': { schema: { $ref: ref } } } } });

function documentWith(paths: Record<string, unknown>, schemas: Record<string, unknown>) {
  return { openapi: '3.0.3', info: { title: 't', version: '1' }, paths, components: { schemas } };
}

describe('bounding the expanded size of imported operations', () => {
  it('refuses an operation whose refs fan out past the bound, in time linear in the document, and keeps the others', () => {
    const document = documentWith(
      { '/bomb': { post: { operationId: 'bomb', ...body('#/components/schemas/L40') } }, '/ok': { post: { operationId: 'ok', ...body('#/components/schemas/L2') } } },
      fanOut(40), // 4^40 leaves: counting it naively would never end
    );
    // Counted naively this would never end (the test's timeout); measured once per ref it is a few hundred steps.
    const { document: kept, refused } = boundExpansion(document, { maxOperationNodes: 1000, maxDocumentNodes: 100_000 });
    expect(refused).toEqual([expect.objectContaining({ id: 'bomb', method: 'post', path: '/bomb', nodes: 1001 })]);
    expect(refused[0]!.reason).toContain('expand past 1000 schema nodes');
    expect(Object.keys(kept.paths as object)).toEqual(['/ok']);
    // Only what the kept operation reaches is handed to the parser.
    expect(Object.keys((kept.components as { schemas: object }).schemas).sort()).toEqual(['L0', 'L1', 'L2']);
  });

  it('refuses nesting deeper than the parser accepts per operation (a chain of refs), not the whole document', async () => {
    const schemas: Record<string, unknown> = { C0: { type: 'string' } };
    for (let i = 1; i <= 5000; i += 1) schemas[`C${i}`] = { type: 'object', properties: { next: { $ref: `#/components/schemas/C${i - 1}` } } };
    const text = JSON.stringify(documentWith({ '/deep': { post: { operationId: 'deep', ...body('#/components/schemas/C5000') } }, '/ok': { get: { operationId: 'ok' } } }, schemas));
    const { document, refused } = await parseOpenApiDocument(text);
    expect(refused.map((operation) => operation.id)).toEqual(['deep']);
    expect(refused[0]!.reason).toContain('nest deeper than');
    expect(Object.keys(document.paths ?? {})).toEqual(['/ok']);
  });

  it('refuses operations past the document bound once the kept ones add up to it', () => {
    const paths = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`/op${i}`, { post: { operationId: `op${i}`, ...body('#/components/schemas/L3') } }]));
    const { refused } = boundExpansion(documentWith(paths, fanOut(3)), { maxOperationNodes: 1000, maxDocumentNodes: 1000 });
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.at(-1)!.reason).toContain("the document's operations together");
  });

  it('leaves recursive schemas to the parser (a cycle counts once) and never resolves responses', async () => {
    const text = JSON.stringify(
      documentWith(
        {
          '/tree': {
            post: { operationId: 'tree', ...body('#/components/schemas/Node'), responses: { 200: { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/L30' } } } } } },
          },
        },
        { ...fanOut(30), Node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } } } },
      ),
    );
    const { document, refused } = await parseOpenApiDocument(text); // resolving the 4^30 response would never end
    expect(refused).toEqual([]);
    expect(Object.keys(document.paths?.['/tree'] ?? {})).toEqual(['post']);
  });
});

describe('fan-out through a schema that is not dereferenced (an MCP tool inputSchema with $defs)', () => {
  it('compiles and hashes in time linear in its text: refs stay refs', () => {
    const schema = { type: 'object', properties: { root: { $ref: '#/$defs/L30' } }, $defs: fanOut(30, '#/$defs/L') };
    // Expanded, this would be 4^30 nodes: neither would ever finish (the test's timeout).
    const check = createSchemaValidator()(schema);
    expect(check?.({ root: { p0: { p1: {} } } })).toEqual({ ok: true });
    expect(canonicalJson(schema).length).toBeLessThan(10_000);
  });
});
