import type { ToolOverride } from '../config/types.js';
import type { Tool, ToolSpec } from '../call/types.js';
import { withOverrides } from './define-tool.js';
import { compileGlobs, type NameMatcher } from '../patterns/name-globs.js';

interface CompiledOverride {
  matches: NameMatcher;
  exact: boolean;
  override: ToolOverride;
}

const alwaysSafe = (): boolean => true;
const neverSafe = (): boolean => false;

function toSpec(override: ToolOverride): Partial<ToolSpec> {
  const spec: Partial<ToolSpec> = {};
  if (override.readOnly !== undefined) spec.readOnly = override.readOnly;
  if (override.destructive !== undefined) spec.destructive = override.destructive;
  if (override.idempotent !== undefined) spec.idempotent = override.idempotent;
  if (override.concurrencySafe !== undefined) spec.isConcurrencySafe = override.concurrencySafe ? alwaysSafe : neverSafe;
  if (override.aliases !== undefined) spec.aliases = override.aliases;
  if (override.deferLoading !== undefined) spec.deferLoading = override.deferLoading;
  if (override.searchHint !== undefined) spec.searchHint = override.searchHint;
  if (override.maxResultChars !== undefined) spec.maxResultChars = override.maxResultChars;
  if (override.timeoutMs !== undefined) spec.timeoutMs = override.timeoutMs;
  if (override.feature !== undefined) spec.feature = override.feature;
  if (override.description !== undefined) spec.description = override.description;
  return spec;
}

/**
 * Per-tool overrides from config (`tools:` by name or glob). Globs apply first in file order,
 * then an exact-name entry, so the most specific entry wins.
 */
export function createOverrideApplier(overrides: Record<string, ToolOverride>): (tool: Tool) => Tool {
  const compiled: CompiledOverride[] = Object.entries(overrides).map(([pattern, override]) => ({
    matches: compileGlobs([pattern]),
    exact: !/[*?[\]{}!]/.test(pattern),
    override,
  }));
  if (compiled.length === 0) return (tool) => tool;
  const ordered = [...compiled.filter((c) => !c.exact), ...compiled.filter((c) => c.exact)];
  return (tool) => {
    const matching = ordered.filter((c) => c.matches(tool.name));
    if (matching.length === 0) return tool;
    return withOverrides(tool, Object.assign({}, ...matching.map((c) => toSpec(c.override))));
  };
}
