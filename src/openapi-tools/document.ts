// The parts of an OpenAPI 3.0/3.1 document the importer reads, after the parser has resolved its
// `$ref`s. Typed loosely on purpose: documents come from third parties, so every field is checked
// where it is used rather than trusted to match these shapes.
import type { JsonObject } from '../call/types.js';

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export type ParameterLocation = 'path' | 'query' | 'header' | 'cookie';

export interface ParameterObject {
  name?: unknown;
  in?: unknown;
  description?: unknown;
  required?: unknown;
  deprecated?: unknown;
  schema?: unknown;
  content?: unknown;
  style?: unknown;
  explode?: unknown;
}

export interface MediaTypeObject {
  schema?: unknown;
}

export interface RequestBodyObject {
  description?: unknown;
  required?: unknown;
  content?: Record<string, MediaTypeObject>;
}

export interface OperationObject {
  operationId?: unknown;
  summary?: unknown;
  description?: unknown;
  tags?: unknown;
  deprecated?: unknown;
  parameters?: unknown;
  requestBody?: RequestBodyObject;
  servers?: unknown;
}

export interface OpenApiDocument {
  openapi: string;
  info?: JsonObject;
  servers?: unknown;
  paths?: Record<string, Record<string, unknown> | undefined>;
}

export const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value);

export const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** Sets an own property, so a name such as `__proto__` from a document stays data and never changes a prototype. */
export function defineOwn(target: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
