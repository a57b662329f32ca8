import type { JsonObject } from '../call/types.js';

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export type ParsedArguments = { ok: true; args: JsonObject } | { ok: false; message: string };

function findForbiddenKey(value: unknown, depth = 0): string | undefined {
  if (depth > 64) return '(nesting too deep)';
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = findForbiddenKey(item, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      if (FORBIDDEN_KEYS.has(key)) return key;
      const found = findForbiddenKey((value as JsonObject)[key], depth + 1);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * Arguments arrive as an object or a JSON string (models often emit strings). Missing means `{}`.
 * Anything else — arrays, numbers, unparsable text, prototype-reaching keys — is not executable.
 */
export function parseArguments(toolName: string, raw: unknown): ParsedArguments {
  let value: unknown = raw;
  if (raw === undefined || raw === null) return { ok: true, args: {} };
  if (typeof raw === 'string') {
    if (raw.trim().length === 0) return { ok: true, args: {} };
    try {
      value = JSON.parse(raw);
    } catch {
      return { ok: false, message: `${toolName} arguments must be a JSON object (the string is not valid JSON)` };
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, message: `${toolName} arguments must be a JSON object` };
  }
  const forbidden = findForbiddenKey(value);
  if (forbidden) return { ok: false, message: `${toolName} arguments contain a forbidden key: ${forbidden}` };
  return { ok: true, args: value as JsonObject };
}
