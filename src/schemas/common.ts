// Shared JSON Schemas: request validation, response serialization and the OpenAPI document.
// Written as plain JSON Schema (`as const`), the one source: TypeBox infers the route types from them
// (type-provider.ts). TypeBox's builders emit keywords in an order of their own, which would reorder openapi.yaml.
import type { FastifySchemaValidationError } from 'fastify';
import { errors as tgErrors } from '../errors.js';
import { toolResult } from './tool-result.js';
import { taskSchema } from './task.js';

export const errorBody = {
  $id: 'ErrorBody',
  type: 'object',
  description: "Fastify's standard error body with a stable TG_* code",
  required: ['statusCode', 'code', 'error', 'message'],
  properties: {
    statusCode: { type: 'integer' },
    code: { type: 'string', examples: ['TG_UNAUTHENTICATED'] },
    error: { type: 'string' },
    message: { type: 'string' },
  },
} as const;

export const callArguments = {
  description: 'Tool arguments: a JSON object, or a JSON string holding one',
  anyOf: [{ type: 'object', additionalProperties: true }, { type: 'string' }, { type: 'null' }],
} as const;

export const callId = { type: 'string', minLength: 1, maxLength: 256 } as const;

export const toolHeaders = {
  type: 'object',
  properties: {
    'x-toolgate-mode': { type: 'string', enum: ['default', 'readonly'], description: 'readonly strips every non-read-only tool' },
    'x-toolgate-depth': { type: 'string', pattern: '^[0-9]{1,3}$', description: 'Gateway chaining depth (loop protection)' },
    'x-request-id': { type: 'string', description: 'Echoed back; generated when absent or malformed' },
  },
} as const;

export const bearerSecurity = [{ bearerAuth: [] }];

export const toolsetName = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$', description: "One of the tenant's named toolsets: only that subset of the caller's pool" } as const;

/** Validation errors as Fastify words them, with the allowed values of an enum spelled out (`format=xml`). */
export function enumErrorFormatter(errors: FastifySchemaValidationError[], dataVar: string): Error {
  const message = errors
    .map((error) => {
      const allowed = error.keyword === 'enum' ? (error.params as { allowedValues?: unknown[] }).allowedValues : undefined;
      return `${dataVar}${error.instancePath} ${error.message ?? 'is invalid'}${allowed ? `: ${allowed.join(', ')}` : ''}`;
    })
    .join(', ');
  return new tgErrors.TG_BAD_REQUEST(message);
}

export const errorResponses = {
  400: { $ref: 'ErrorBody#' },
  401: { $ref: 'ErrorBody#' },
  403: { $ref: 'ErrorBody#' },
  503: { $ref: 'ErrorBody#' },
} as const;

export const readiness = {
  $id: 'Readiness',
  type: 'object',
  required: ['status'],
  // Status only: per-upstream state is for operators (GET /v1/admin/upstreams).
  properties: { status: { type: 'string', enum: ['ready', 'not_ready', 'draining', 'shedding'] } },
} as const;

export const sharedSchemas = [errorBody, toolResult, readiness, taskSchema];
