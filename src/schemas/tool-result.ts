// The ToolResult: its JSON Schema (response serialization, the OpenAPI document, the console's generated
// types) and its TypeScript type, inferred from the schema so the two cannot drift. Dependency-free:
// src/call/types.ts re-exports from here, so nothing here may import it.
import type { Static } from 'typebox';

/** The stable set of tool-level failure kinds (docs/architecture.md#tool-results). */
export const ERROR_TYPES = [
  'UNKNOWN_TOOL',
  'VALIDATION_ERROR',
  'PERMISSION_DENIED',
  'APPROVAL_DENIED',
  'APPROVAL_EXPIRED',
  'RATE_LIMITED',
  'TIMEOUT',
  'CIRCUIT_OPEN',
  'DEPTH_EXCEEDED',
  'UPSTREAM_ERROR',
  'TOOL_EXCEPTION',
  'CONNECTION_REQUIRED',
  'GUARDRAIL_BLOCKED',
  'QUOTA_EXCEEDED',
] as const;
export type ErrorType = (typeof ERROR_TYPES)[number];

/**
 * Where a tool comes from, in routing precedence order. RAG tools are function tools for routing (the
 * same rank, the tenant's `functions` allowlist) but report `rag` as their source.
 */
export const SOURCE_PRECEDENCE = ['builtin', 'user-mcp', 'local-mcp', 'function', 'rag', 'global-mcp'] as const;
export type ToolSourceKind = (typeof SOURCE_PRECEDENCE)[number];

/** The body of every finished `/v1/execute` answer (docs/architecture.md#tool-results). */
export const toolResult = {
  $id: 'ToolResult',
  type: 'object',
  required: ['callId', 'name', 'ok', 'output', 'source', 'durationMs', 'truncated', 'trace'],
  properties: {
    callId: { type: 'string' },
    name: { type: 'string' },
    ok: { type: 'boolean' },
    output: { type: 'string', description: 'What the model reads; TOOL_ERROR: {...} on failure' },
    // A type union, not anyOf: fast-json-stringify picks anyOf branches by running ajv on every response.
    source: { type: ['string', 'null'], enum: [...SOURCE_PRECEDENCE, null] },
    durationMs: { type: 'number' },
    truncated: { type: 'boolean' },
    trace: { description: 'Structured detail for observability; never shown to the model' },
    error: {
      type: 'object',
      required: ['errorType', 'error'],
      properties: { errorType: { type: 'string', enum: [...ERROR_TYPES] }, error: { type: 'string' } },
    },
    // Set when the call waits for a human (HTTP 202).
    status: { type: 'string', enum: ['pending_approval'] },
    approvalId: { type: 'string' },
    // Set with RATE_LIMITED and QUOTA_EXCEEDED (HTTP 429 + Retry-After).
    retryAfterMs: { type: 'integer' },
    // Set when a budget is near or at its limit (docs/governance.md#budgets): the tightest one; REST also sends it as headers.
    budget: {
      type: 'object',
      required: ['id', 'limit', 'remaining', 'resetAt'],
      properties: {
        id: { type: 'string' },
        unit: { type: 'string', enum: ['calls', 'cost'] },
        limit: { type: 'integer' },
        remaining: { type: 'integer' },
        resetAt: { type: 'string', format: 'date-time' },
      },
    },
    // The name the caller used when it resolved through an alias.
    resolvedFrom: { type: 'string' },
  },
} as const;

export type ToolResult = Static<typeof toolResult>;
export type ToolFailure = NonNullable<ToolResult['error']>;
