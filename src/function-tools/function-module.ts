import { stat } from 'node:fs/promises';
import { importUserModule } from '../modules/import-user-module.js';
import { defineTool } from '../registry/define-tool.js';
import type { Tool, ToolSpec } from '../call/types.js';

class FunctionModuleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FunctionModuleError';
  }
}

const SPEC_KEYS = new Set([
  'name', 'description', 'inputSchema', 'handler', 'readOnly', 'destructive', 'idempotent', 'isConcurrencySafe',
  'aliases', 'deferLoading', 'searchHint', 'feature', 'maxResultChars', 'timeoutMs', 'permission', 'bindings',
]);

function toTool(candidate: unknown, modulePath: string, index: number): Tool {
  if (candidate === null || typeof candidate !== 'object') {
    throw new FunctionModuleError(`${modulePath}: export #${index} is not a tool spec object`);
  }
  const spec = candidate as Record<string, unknown>;
  const unknownKeys = Object.keys(spec).filter((key) => !SPEC_KEYS.has(key));
  if (unknownKeys.length > 0) throw new FunctionModuleError(`${modulePath}: tool ${String(spec.name)} has unknown keys ${unknownKeys.join(', ')}`);
  if (typeof spec.name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(spec.name)) {
    throw new FunctionModuleError(`${modulePath}: export #${index} needs a name matching ^[A-Za-z0-9_-]{1,64}$`);
  }
  if (typeof spec.handler !== 'function') throw new FunctionModuleError(`${modulePath}: tool ${spec.name} needs a handler function`);
  return defineTool({ ...(spec as unknown as ToolSpec), source: 'function', service: undefined });
}

/**
 * Imports a function-tool module (default export: a spec or an array of specs). The URL carries the
 * file's mtime so a reload picks up an edited module instead of Node's cached one.
 */
export async function loadFunctionModule(modulePath: string): Promise<Tool[]> {
  let version: number;
  try {
    version = (await stat(modulePath)).mtimeMs;
  } catch {
    throw new FunctionModuleError(`${modulePath}: module not found`);
  }
  const loaded = (await importUserModule(modulePath, `v=${version}`)) as { default?: unknown };
  if (loaded.default === undefined) throw new FunctionModuleError(`${modulePath}: no default export`);
  const specs = Array.isArray(loaded.default) ? loaded.default : [loaded.default];
  return specs.map((spec, index) => toTool(spec, modulePath, index));
}
