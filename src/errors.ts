// Every request-level error code, in one table (the Fastify model: key equals code), and the one mapping
// of the domain errors onto it. Tool-level failures are not here: they are ToolResults with an errorType
// (src/call/types.ts).
import createError from '@fastify/error';
import type { FastifyError } from 'fastify';

export const errors = {
  TG_UNAUTHENTICATED: createError('TG_UNAUTHENTICATED', '%s', 401),
  TG_UNKNOWN_TENANT: createError('TG_UNKNOWN_TENANT', 'tenant is not configured', 403),
  TG_FORBIDDEN: createError('TG_FORBIDDEN', '%s', 403),
  /** Separation of duties: the decider is the requester, or one person holds both the requesting and the deciding key. */
  TG_SELF_APPROVAL: createError('TG_SELF_APPROVAL', '%s', 403),
  TG_BAD_REQUEST: createError('TG_BAD_REQUEST', '%s', 400),
  TG_NOT_FOUND: createError('TG_NOT_FOUND', '%s', 404),
  /** GET/DELETE /mcp while MCP sessions are off (`mcpServer.sessions: false`); answered with `Allow: POST`. */
  TG_METHOD_NOT_ALLOWED: createError('TG_METHOD_NOT_ALLOWED', '%s', 405),
  TG_CONFLICT: createError('TG_CONFLICT', '%s', 409),
  /** A conditional write whose `If-Match` / `If-None-Match` no longer holds (the tenant API): read again, then write. */
  TG_PRECONDITION_FAILED: createError('TG_PRECONDITION_FAILED', '%s', 412),
  TG_EGRESS_DENIED: createError('TG_EGRESS_DENIED', '%s', 400),
  TG_REQUEST_TIMEOUT: createError('TG_REQUEST_TIMEOUT', '%s', 408),
  TG_PAYLOAD_TOO_LARGE: createError('TG_PAYLOAD_TOO_LARGE', 'request body is too large', 413),
  TG_UNSUPPORTED_MEDIA_TYPE: createError('TG_UNSUPPORTED_MEDIA_TYPE', '%s', 415),
  TG_OVERLOADED: createError('TG_OVERLOADED', '%s', 503),
  TG_NOT_READY: createError('TG_NOT_READY', '%s', 503),
  /** The shared state store (Redis) did not answer: approvals and user MCP registrations fail closed. */
  TG_STORE_UNAVAILABLE: createError('TG_STORE_UNAVAILABLE', '%s', 503),
  /** An MCP service the caller may reach did not answer a resource read or prompt (down, timed out, refused). */
  TG_UPSTREAM_ERROR: createError('TG_UPSTREAM_ERROR', '%s', 502),
  /** A resource read or prompt get over the tenant's rate limit (policies.rate-limit); sent with Retry-After. */
  TG_RATE_LIMITED: createError('TG_RATE_LIMITED', '%s', 429),
  TG_CONFIG_INVALID: createError('TG_CONFIG_INVALID', '%s', 400),
  TG_INTERNAL: createError('TG_INTERNAL', 'internal server error', 500),
} as const;

export type ErrorCode = keyof typeof errors;

/**
 * An error of the gateway's own domain (an unknown tenant, a refused approval, a catalog name nobody
 * reaches…) that may end a request: it names its row of the table, and `gatewayErrorOf` turns it into that
 * error for every wire — the HTTP error handler, the MCP endpoint, the audit's refusal codes. Thrown
 * as they are; no route maps them itself.
 */
export abstract class DomainError extends Error {
  abstract readonly gatewayCode: ErrorCode;
  /** Sent as Retry-After (rounded up to seconds) when set. */
  readonly retryAfterMs?: number;
  /** Whether the message may be shown to the caller; when false the table's own message is. */
  readonly showsMessage: boolean = true;
}

/** The table's error for a domain error; undefined for anything else (Fastify's own, a TG_* error, a bug). */
export function gatewayErrorOf(error: unknown): FastifyError | undefined {
  if (!(error instanceof DomainError)) return undefined;
  const GatewayError = errors[error.gatewayCode];
  return error.showsMessage ? new GatewayError(error.message) : new GatewayError();
}
