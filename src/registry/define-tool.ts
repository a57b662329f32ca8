import { withRunnablePatterns } from '../patterns/schema-patterns.js';
import type { JsonObject, Tool, ToolSpec } from '../call/types.js';

export const DEFAULT_MAX_RESULT_CHARS = 100_000;
const EMPTY_OBJECT_SCHEMA: JsonObject = Object.freeze({ type: 'object', properties: {} });

// Fail-closed: a tool that says nothing about itself is serial, may write, and defers permission to the policy stack.
const serialByDefault = (): boolean => false;

/**
 * The only way to make a tool, for every source. Fills the fail-closed defaults of docs/architecture.md#tool-definitions
 * and freezes the result so no code path can mutate a shared definition. A schema pattern the linear-time
 * engine cannot run is removed and noted (docs/security-model.md#untrusted-patterns-and-schemas).
 */
export function defineTool(spec: ToolSpec): Tool {
  if (typeof spec?.name !== 'string' || spec.name.length === 0) throw new TypeError('defineTool: name is required');
  if (typeof spec.handler !== 'function') throw new TypeError(`defineTool(${spec.name}): handler must be a function`);
  const maxResultChars = spec.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS;
  if (!Number.isInteger(maxResultChars) || maxResultChars < 1) {
    throw new TypeError(`defineTool(${spec.name}): maxResultChars must be a positive integer`);
  }
  return Object.freeze({
    name: spec.name,
    description: spec.description ?? '',
    // Patterns the linear-time engine refuses are taken out (and noted) here, once, for every source
    // (the output schema too: upstream MCP clients check structured output with the same engine).
    inputSchema: Object.freeze(spec.inputSchema ? withRunnablePatterns(spec.inputSchema) : EMPTY_OBJECT_SCHEMA),
    outputSchema: spec.outputSchema ? Object.freeze(withRunnablePatterns(spec.outputSchema)) : undefined,
    handler: spec.handler,
    source: spec.source ?? 'function',
    service: spec.service,
    readOnly: spec.readOnly ?? false,
    destructive: spec.destructive ?? false,
    idempotent: spec.idempotent ?? false,
    isConcurrencySafe: spec.isConcurrencySafe ?? serialByDefault,
    permission: spec.permission ?? 'defer',
    maxResultChars,
    timeoutMs: spec.timeoutMs,
    aliases: Object.freeze([...(spec.aliases ?? [])]),
    deferLoading: spec.deferLoading ?? false,
    searchHint: spec.searchHint,
    feature: spec.feature,
    checkStructure: spec.checkStructure,
    bindings: spec.bindings ? Object.freeze({ ...spec.bindings }) : undefined,
  });
}

/** A copy of a tool with some fields overridden (config `tools:` overrides, MCP renaming), defaults kept. */
export function withOverrides(tool: Tool, overrides: Partial<ToolSpec>): Tool {
  return defineTool({ ...tool, ...overrides } as ToolSpec);
}

/** Safe classification: a classifier that throws means "unsafe" (docs/architecture.md#batch). */
export function isCallConcurrencySafe(tool: Tool, args: JsonObject): boolean {
  try {
    return tool.isConcurrencySafe(args) === true;
  } catch {
    return false;
  }
}
