// Text → a dereferenced OpenAPI 3.0/3.1 document. `$ref`s are resolved by @readme/openapi-parser (a
// maintained fork of swagger-parser) with external references switched off: a document is one file
// or one URL the operator chose, and resolving never reaches the file system or the network.
import { parse as parseYaml } from 'yaml';
import { isObject, type OpenApiDocument } from './document.js';
import { boundExpansion, DEFAULT_EXPANSION_BOUNDS, type ExpansionBounds, type RefusedOperation } from './expansion.js';

// Loaded on the first document: a gateway without OpenAPI sources never loads the parser and its dependencies
// (ajv-draft-04, better-ajv-errors, @babel/*: ~1.7 MiB of heap kept from start on Node 24; bench/results.md, issue 46).
type Dereference = (typeof import('@readme/openapi-parser'))['dereference'];
let parser: Promise<Dereference> | undefined;
const loadParser = (): Promise<Dereference> => (parser ??= import('@readme/openapi-parser').then((module) => module.dereference));

/** GitHub's 1,200 operations resolve in 1–2 s; a document that takes far longer is refused, not waited on. */
const DEREFERENCE_TIMEOUT_MS = 30_000;

export class OpenApiDocumentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OpenApiDocumentError';
  }
}

/** Parses JSON (fast path) or YAML; the caller has already bounded the text's size. */
function parseText(text: string): unknown {
  const trimmed = text.trimStart();
  try {
    if (trimmed.startsWith('{')) return JSON.parse(trimmed) as unknown;
    return parseYaml(text, { maxAliasCount: 100 }) as unknown;
  } catch (error) {
    throw new OpenApiDocumentError(`not valid JSON or YAML: ${(error as Error).message.split('\n')[0]}`);
  }
}

/** 3.0 and 3.1 are imported; Swagger 2.0 and anything else is refused with what to do instead. */
function checkVersion(document: Record<string, unknown>): string {
  if (document.swagger !== undefined) {
    throw new OpenApiDocumentError(
      `Swagger ${String(document.swagger)} documents are not imported: convert it to OpenAPI 3 first (e.g. \`npx swagger2openapi in.json -o out.json\`) and point the entry at the result`,
    );
  }
  const version = document.openapi;
  if (typeof version !== 'string') throw new OpenApiDocumentError('not an OpenAPI document (no "openapi" version field)');
  if (!/^3\.[01]\.\d+/.test(version)) throw new OpenApiDocumentError(`OpenAPI ${version} is not supported (3.0.x and 3.1.x are)`);
  if (!isObject(document.paths)) throw new OpenApiDocumentError('the document has no "paths" object');
  return version;
}

export interface ParsedDocument {
  document: OpenApiDocument;
  /** Operations left out before resolving because they would expand past the bounds (expansion.ts). */
  refused: RefusedOperation[];
}

export async function parseOpenApiDocument(text: string, bounds: ExpansionBounds = DEFAULT_EXPANSION_BOUNDS): Promise<ParsedDocument> {
  const parsed = parseText(text);
  if (!isObject(parsed)) throw new OpenApiDocumentError('the document is not a JSON/YAML object');
  checkVersion(parsed);
  // Measured before the parser sees it: the parser's own walk grows with the expanded size
  // (docs/security-model.md#schema-size-bounds).
  const { document, refused } = boundExpansion(parsed, bounds);
  try {
    // `circular: 'ignore'` leaves a recursive schema's inner `$ref` in place (an object cycle could not
    // be serialised); json-schema.ts turns what is left into an open schema.
    const dereference = await loadParser();
    const resolved = await dereference(document as never, { resolve: { external: false, file: false }, dereference: { circular: 'ignore' }, timeoutMs: DEREFERENCE_TIMEOUT_MS });
    return { document: resolved as unknown as OpenApiDocument, refused };
  } catch (error) {
    throw new OpenApiDocumentError(`$ref resolution failed: ${(error as Error).message.split('\n')[0]}`);
  }
}
