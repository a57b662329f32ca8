import { sha256Hex } from '../shared/canonical-json.js';

/** The longest tool name the model APIs accept; every generated name is kept within it. */
export const MAX_TOOL_NAME = 64;
const HASH_CHARS = 8;
const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Whether a name is one a model may be shown (docs/architecture.md#tool-names). */
export const isToolName = (name: string): boolean => TOOL_NAME_PATTERN.test(name);

/**
 * Deterministic shortening: kept prefix + `_` + the first 8 hex chars of SHA-256(full name).
 * The hash covers the whole original so two long names sharing a prefix still differ.
 */
export function shortenName(name: string, max: number = MAX_TOOL_NAME): string {
  if (name.length <= max) return name;
  if (max < HASH_CHARS + 2) throw new RangeError(`shortenName: max ${max} leaves no room for a prefix`);
  return `${name.slice(0, max - HASH_CHARS - 1)}_${sha256Hex(name).slice(0, HASH_CHARS)}`;
}
