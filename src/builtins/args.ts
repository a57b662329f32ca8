import { ToolError } from '../call/tool-error.js';
import type { JsonObject } from '../call/types.js';

// Arguments are schema-validated before a handler runs; these readers keep handlers total when called directly.

export function requiredString(args: JsonObject, key: string, tool: string): string {
  const value = args[key];
  if (typeof value !== 'string' || value.length === 0) throw new ToolError('VALIDATION_ERROR', `${tool} requires a non-empty ${key}`);
  return value;
}

export function stringArg(args: JsonObject, key: string, tool: string): string {
  const value = args[key];
  if (typeof value !== 'string') throw new ToolError('VALIDATION_ERROR', `${tool} requires ${key} (a string)`);
  return value;
}

export function optionalString(args: JsonObject, key: string): string | undefined {
  const value = args[key];
  return typeof value === 'string' ? value : undefined;
}

export function optionalInt(args: JsonObject, key: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const value = args[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ToolError('VALIDATION_ERROR', `${key} must be an integer between ${min} and ${max}`);
  }
  return value;
}

export function optionalBoolean(args: JsonObject, key: string): boolean {
  return args[key] === true;
}

/** Text split into lines with its line ending and trailing-newline state, so writers can put both back. */
export interface SplitText {
  lines: string[];
  eol: '\n' | '\r\n';
  trailingNewline: boolean;
}

export function splitText(text: string): SplitText {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const trailingNewline = text.endsWith('\n');
  const body = trailingNewline ? text.slice(0, text.endsWith('\r\n') ? -2 : -1) : text;
  const lines = body.length === 0 && trailingNewline ? [''] : body.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  return { lines: text.length === 0 ? [] : lines, eol, trailingNewline };
}

export function joinText({ lines, eol, trailingNewline }: SplitText): string {
  if (lines.length === 0) return '';
  return lines.join(eol) + (trailingNewline ? eol : '');
}

/** A closed object schema: unknown argument names are validation errors, never silently ignored. */
export function strictObject(properties: JsonObject, required: string[] = []): JsonObject {
  return { type: 'object', properties, required, additionalProperties: false };
}
