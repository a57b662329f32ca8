// The operations of a document, after include/exclude: each either selected (with its merged
// parameters) or skipped with the reason, so an import can report what it left out and why.
import { compileGlobs } from '../patterns/name-globs.js';
import { asString, HTTP_METHODS, isObject, type HttpMethod, type OpenApiDocument, type OperationObject, type ParameterObject } from './document.js';

export interface Operation {
  method: HttpMethod;
  path: string;
  /** The document's operationId, or `<method>_<path>` when it has none. */
  id: string;
  tags: string[];
  operation: OperationObject;
  /** Path-level parameters overridden by the operation's own (same name and location). */
  parameters: ParameterObject[];
}

export type SkipReason = 'excluded' | 'not included' | 'deprecated' | 'unsupported request body' | 'required cookie parameter' | 'schema too large';

export interface Selection {
  selected: Operation[];
  skipped: Array<{ id: string; reason: SkipReason }>;
}

export interface SelectionRules {
  include: readonly string[];
  exclude: readonly string[];
}

function mergeParameters(pathLevel: unknown, operationLevel: unknown): ParameterObject[] {
  const merged = new Map<string, ParameterObject>();
  for (const list of [pathLevel, operationLevel]) {
    if (!Array.isArray(list)) continue;
    for (const parameter of list) {
      if (!isObject(parameter)) continue;
      merged.set(`${String(parameter.in)}\u0000${String(parameter.name)}`, parameter);
    }
  }
  return [...merged.values()];
}

/** Every operation in document order, before any selection. */
export function listOperations(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (!isObject(item)) continue;
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      const tags = Array.isArray(operation.tags) ? operation.tags.filter((tag): tag is string => typeof tag === 'string') : [];
      operations.push({
        method,
        path,
        id: asString(operation.operationId) ?? `${method}_${path}`,
        tags,
        operation: operation as OperationObject,
        parameters: mergeParameters(item.parameters, operation.parameters),
      });
    }
  }
  return operations;
}

/**
 * include/exclude globs match the operationId or any tag; exclude wins. A deprecated operation is
 * imported only when an include entry names its operationId exactly.
 */
export function selectOperations(operations: readonly Operation[], rules: SelectionRules): Selection {
  const include = compileGlobs(rules.include);
  const exclude = compileGlobs(rules.exclude);
  const named = new Set(rules.include);
  const matches = (matcher: (name: string) => boolean, operation: Operation): boolean => matcher(operation.id) || operation.tags.some(matcher);
  const selection: Selection = { selected: [], skipped: [] };
  for (const operation of operations) {
    let reason: SkipReason | undefined;
    if (matches(exclude, operation)) reason = 'excluded';
    else if (!matches(include, operation)) reason = 'not included';
    else if (operation.operation.deprecated === true && !named.has(operation.id)) reason = 'deprecated';
    if (reason) selection.skipped.push({ id: operation.id, reason });
    else selection.selected.push(operation);
  }
  return selection;
}
