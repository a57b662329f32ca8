// How large an operation becomes once its `$ref`s are resolved, measured on the document as parsed and
// before anything dereferences it: refs that fan out (each level naming the next four times) double a
// document's size with every few bytes, so resolving first and measuring after would already be the freeze.
// Counting is linear in the document: each ref target is measured once and its size reused.
import { HTTP_METHODS, isObject } from './document.js';
import type { JsonObject } from '../call/types.js';

/** Bounds on the resolved size of imported operations (docs/security-model.md#schema-size-bounds). */
export interface ExpansionBounds {
  /** Nodes (objects, arrays and values) one operation's parameters and request body may expand to. */
  maxOperationNodes: number;
  /** Nodes all imported operations together may expand to; past it the remaining operations are refused. */
  maxDocumentNodes: number;
}

// GitHub's 1,100 operations: none past 1,000 nodes, under 100,000 together.
export const DEFAULT_EXPANSION_BOUNDS: ExpansionBounds = { maxOperationNodes: 20_000, maxDocumentNodes: 500_000 };

/**
 * Nesting deeper than this (refs expanded) is refused per operation: the parser refuses a whole document
 * past 500 levels, and counting that deep would risk the stack.
 */
const MAX_DEPTH = 400;

export interface RefusedOperation {
  method: string;
  path: string;
  id: string;
  /** The size measured, or the bound + 1 when counting stopped there. */
  nodes: number;
  reason: string;
}

/** What is left to resolve: only the request side of each operation that fits, and what it refers to. */
export interface BoundedDocument {
  document: JsonObject;
  refused: RefusedOperation[];
}

function decodePointer(ref: string): string[] | undefined {
  if (!ref.startsWith('#')) return undefined;
  const pointer = ref.slice(1);
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  try {
    return pointer
      .slice(1)
      .split('/')
      .map((token) => decodeURIComponent(token).replace(/~1/g, '/').replace(/~0/g, '~'));
  } catch {
    return undefined;
  }
}

function resolvePointer(root: unknown, tokens: readonly string[]): unknown {
  let node = root;
  for (const token of tokens) {
    if (Array.isArray(node)) node = node[Number(token)];
    else if (isObject(node) && Object.hasOwn(node, token)) node = node[token];
    else return undefined;
  }
  return node;
}

interface Measure {
  /** Nodes once refs are expanded, at most the node limit + 1. */
  nodes: number;
  /** Levels of nesting once refs are expanded, at most MAX_DEPTH + 1. */
  depth: number;
}

/**
 * Measures a value with its local `$ref`s expanded, stopping past `limit` nodes or MAX_DEPTH levels (so a
 * hostile document can neither take long nor exhaust the stack here). A ref back into one being measured (a
 * recursive schema) counts as one node: the parser leaves it as a `$ref`, which becomes an open schema.
 * A size is measured once per ref target and object; one first met deep down may be judged as deep as
 * where it was met (never smaller than it is).
 */
function createMeasure(root: JsonObject, limit: number): (value: unknown) => Measure {
  const byRef = new Map<string, Measure>();
  const measuring = new Set<string>();
  const byObject = new WeakMap<object, Measure>();
  const LEAF: Measure = { nodes: 1, depth: 1 };
  const TOO_DEEP: Measure = { nodes: 1, depth: MAX_DEPTH + 1 };

  function measure(value: unknown, level: number): Measure {
    if (value === null || typeof value !== 'object') return LEAF;
    const known = byObject.get(value);
    if (known) return known;
    if (level > MAX_DEPTH) return TOO_DEEP;
    let nodes = 1;
    let inner = 0;
    const ref = isObject(value) && typeof value.$ref === 'string' ? value.$ref : undefined;
    if (ref !== undefined) {
      const target = measureRef(ref, level + 1);
      nodes += target.nodes;
      inner = target.depth;
    }
    for (const item of Array.isArray(value) ? value : Object.values(value)) {
      if (nodes > limit || inner > MAX_DEPTH) break;
      const child = measure(item, level + 1);
      nodes += child.nodes;
      inner = Math.max(inner, child.depth);
    }
    const result = { nodes: Math.min(nodes, limit + 1), depth: Math.min(inner + 1, MAX_DEPTH + 1) };
    byObject.set(value, result);
    return result;
  }

  function measureRef(ref: string, level: number): Measure {
    const known = byRef.get(ref);
    if (known) return known;
    if (measuring.has(ref)) return LEAF;
    const tokens = decodePointer(ref);
    if (!tokens) return LEAF; // an external reference: the parser refuses the document, not this measure
    measuring.add(ref);
    const result = measure(resolvePointer(root, tokens), level);
    measuring.delete(ref);
    byRef.set(ref, result);
    return result;
  }

  return (value) => measure(value, 0);
}

/** The top-level `components.<kind>.<name>` entries the kept operations reach, following refs once each. */
function reachedComponents(root: JsonObject, from: unknown): JsonObject {
  const components = isObject(root.components) ? root.components : {};
  const kept: JsonObject = {};
  const seenRefs = new Set<string>();
  const seen = new WeakSet<object>();
  const pending: unknown[] = [from];
  while (pending.length > 0) {
    const value = pending.pop();
    if (value === null || typeof value !== 'object' || seen.has(value)) continue;
    seen.add(value);
    const ref = isObject(value) && typeof value.$ref === 'string' ? value.$ref : undefined;
    if (ref !== undefined && !seenRefs.has(ref)) {
      seenRefs.add(ref);
      const tokens = decodePointer(ref);
      if (tokens?.[0] === 'components' && tokens.length >= 3) {
        const [, kind, name] = tokens as [string, string, string];
        const entries = components[kind];
        if (isObject(entries) && Object.hasOwn(entries, name)) {
          const keptEntries = isObject(kept[kind]) ? kept[kind] : (kept[kind] = {});
          keptEntries[name] = entries[name];
          pending.push(entries[name]);
        }
      }
    }
    pending.push(...(Array.isArray(value) ? value : Object.values(value)));
  }
  return kept;
}

/**
 * The document as the importer needs it resolved: every operation whose parameters and request body fit
 * the bounds, without its responses (never read), and only the components those operations refer to. An
 * operation past a bound is refused with its measured size; the others are imported as usual.
 */
export function boundExpansion(document: JsonObject, bounds: ExpansionBounds = DEFAULT_EXPANSION_BOUNDS): BoundedDocument {
  const measure = createMeasure(document, bounds.maxOperationNodes);
  const refused: RefusedOperation[] = [];
  const paths: JsonObject = {};
  let documentNodes = 0;
  for (const [path, item] of Object.entries(isObject(document.paths) ? document.paths : {})) {
    if (!isObject(item)) continue;
    // A path item's own `$ref` is not followed: what it would bring in was never measured.
    const keptItem: JsonObject = {};
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      const id = typeof operation.operationId === 'string' ? operation.operationId : `${method}_${path}`;
      const { responses: _responses, callbacks: _callbacks, ...request } = operation;
      const { nodes, depth } = measure([item.parameters, request]);
      const reason =
        nodes > bounds.maxOperationNodes
          ? `its parameters and request body expand past ${bounds.maxOperationNodes} schema nodes once $refs are resolved`
          : depth > MAX_DEPTH
            ? `its parameters and request body nest deeper than ${MAX_DEPTH} levels once $refs are resolved`
            : documentNodes + nodes > bounds.maxDocumentNodes
            ? `the document's operations together expand past ${bounds.maxDocumentNodes} schema nodes`
            : undefined;
      if (reason) {
        refused.push({ method, path, id, nodes, reason });
        continue;
      }
      documentNodes += nodes;
      keptItem[method] = request;
    }
    if (Object.keys(keptItem).length === 0) continue;
    if (item.parameters !== undefined) keptItem.parameters = item.parameters; // measured with each operation
    paths[path] = keptItem;
  }
  // Only what the importer reads: top-level parts it never uses (webhooks, x-…) are not resolved either.
  const { openapi, info, servers } = document;
  return { document: { openapi, info, servers, paths, components: reachedComponents(document, paths) }, refused };
}
