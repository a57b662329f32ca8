// One `openapi:` entry + its parsed document → tools and a report of what was imported or skipped.
import type { OpenApiEntry } from '../config/types.js';
import type { FetchLike } from '../egress/pinned-fetch.js';
import { generateApiFunctionName } from '../mcp/client/naming.js';
import { MAX_TOOL_NAME } from '../registry/tool-names.js';
import { sha256Hex } from '../shared/canonical-json.js';
import type { ServiceCredentials } from '../call/upstream-credential.js';
import type { Tool } from '../call/types.js';
import { asString, isObject, type OpenApiDocument } from './document.js';
import type { RefusedOperation } from './expansion.js';
import { createSchemaConverter } from './json-schema.js';
import { createOperationTool } from './operation-tool.js';
import { listOperations, selectOperations, type Operation, type SkipReason } from './operations.js';
import { OpenApiDocumentError } from './parse-document.js';
import { planOperation } from './request-plan.js';

/** Past this many imported operations an entry is listed deferred unless it sets `defer`. */
const AUTO_DEFER_OPERATIONS = 50;
const MAX_DESCRIPTION_CHARS = 1000;
const MAX_SEARCH_HINT_CHARS = 200;

export interface ImportReport {
  openapi: string;
  baseUrl: string;
  operations: number;
  imported: number;
  skipped: Partial<Record<SkipReason, number>>;
  deferred: boolean;
}

export interface ImportedDocument {
  tools: Tool[];
  report: ImportReport;
}

/** The document's first server, its `{variables}` filled with their defaults; relative URLs resolve against where the document came from. */
function serverUrl(document: OpenApiDocument, documentUrl: string | undefined): string | undefined {
  const first = Array.isArray(document.servers) ? document.servers[0] : undefined;
  if (!isObject(first)) return undefined;
  let url = asString(first.url);
  if (!url) return undefined;
  const variables = isObject(first.variables) ? first.variables : {};
  url = url.replace(/\{([^}]+)\}/g, (whole, name: string) => {
    const variable = variables[name];
    return isObject(variable) && typeof variable.default === 'string' ? variable.default : whole;
  });
  if (/^https?:\/\//i.test(url)) return url;
  return documentUrl ? new URL(url, documentUrl).href : undefined;
}

function resolveBaseUrl(entry: OpenApiEntry, document: OpenApiDocument): string {
  const base = entry.baseUrl ?? serverUrl(document, entry.url);
  if (!base) throw new OpenApiDocumentError('no baseUrl configured and the document has no absolute server URL');
  let parsed: URL;
  try {
    parsed = new URL(base);
  } catch {
    throw new OpenApiDocumentError(`base URL ${base} is not a valid URL`);
  }
  // A fetched document is not the operator's own text: whoever serves it must not be able to send the
  // calls, with the headers configured for this API, to a host of their choosing.
  if (entry.baseUrl === undefined && entry.url !== undefined && parsed.origin !== new URL(entry.url).origin) {
    throw new OpenApiDocumentError(`the document's server ${parsed.origin} is not where the document came from (${new URL(entry.url).origin}): set baseUrl to call it`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new OpenApiDocumentError(`base URL ${base} is not http(s)`);
  if (parsed.username || parsed.password) throw new OpenApiDocumentError('credentials in the base URL are not allowed (use headers)');
  if (parsed.search || parsed.hash) throw new OpenApiDocumentError(`base URL ${base} must not carry a query or fragment`);
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
}

function describe(operation: Operation): string {
  const summary = asString(operation.operation.summary)?.trim() ?? '';
  const details = asString(operation.operation.description)?.trim() ?? '';
  const text = details && details !== summary ? (summary ? `${summary}\n\n${details}` : details) : summary;
  return text.length > MAX_DESCRIPTION_CHARS ? `${text.slice(0, MAX_DESCRIPTION_CHARS - 1)}…` : text;
}

/**
 * `<name>_<operationId>` by the local-MCP naming rule (sanitised, ≤ 64 with a hash when longer). Two
 * operationIds that sanitise alike keep the first; the next gets a suffix from its method and path.
 */
function uniqueName(entryName: string, operation: Operation, taken: Set<string>): string {
  let name = generateApiFunctionName(entryName, operation.id);
  if (taken.has(name)) name = `${name.slice(0, MAX_TOOL_NAME - 9)}_${sha256Hex(`${operation.method} ${operation.path}`).slice(0, 8)}`;
  taken.add(name);
  return name;
}

/** What the import takes beside the document. */
export interface ImportOptions {
  /** Operations the parser never saw because they expand past the bounds (expansion.ts). */
  readonly refused?: readonly RefusedOperation[];
  /** The entry's upstream credentials, when it has `auth`. */
  readonly credentials?: ServiceCredentials;
}

export function importDocument(entry: OpenApiEntry, document: OpenApiDocument, fetch: FetchLike, options: ImportOptions = {}): ImportedDocument {
  const { refused = [], credentials } = options;
  const baseUrl = resolveBaseUrl(entry, document);
  const operations = listOperations(document);
  const selection = selectOperations(operations, entry);
  const skipped: Partial<Record<SkipReason, number>> = {};
  const count = (reason: SkipReason): void => {
    skipped[reason] = (skipped[reason] ?? 0) + 1;
  };
  for (const skip of selection.skipped) count(skip.reason);
  for (let index = 0; index < refused.length; index += 1) count('schema too large');

  const convert = createSchemaConverter();
  const configuredHeaders = new Set(Object.keys(entry.headers).map((name) => name.toLowerCase()));
  const planned = selection.selected.flatMap((operation) => {
    const result = planOperation(operation, convert, configuredHeaders);
    if (!result.ok) {
      count(result.reason);
      return [];
    }
    return [{ operation, ...result }];
  });

  const deferred = entry.defer ?? planned.length > AUTO_DEFER_OPERATIONS;
  const taken = new Set<string>();
  const tools = planned.map(({ operation, inputSchema, plan }) =>
    createOperationTool(
      {
        name: uniqueName(entry.name, operation, taken),
        description: describe(operation),
        inputSchema,
        plan,
        operationId: operation.id,
        service: `openapi:${entry.name}`,
        baseUrl,
        headers: entry.headers,
        timeoutMs: entry.timeoutMs,
        maxResultChars: entry.maxResultChars,
        deferLoading: deferred,
        ...(credentials ? { credentials } : {}),
        searchHint: `${operation.method.toUpperCase()} ${operation.path}${operation.tags.length > 0 ? ` (${operation.tags.join(', ')})` : ''}`.slice(0, MAX_SEARCH_HINT_CHARS),
      },
      fetch,
    ),
  );
  return { tools, report: { openapi: document.openapi, baseUrl, operations: operations.length + refused.length, imported: tools.length, skipped, deferred } };
}
