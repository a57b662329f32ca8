// Domain errors (src/errors.ts) on the JSON-RPC wire of /mcp: one mapping for tools, resources and prompts,
// from the TG_* code each domain error carries.
import { ProtocolErrorCode as ErrorCode } from '@modelcontextprotocol/server';
import { DomainError, gatewayErrorOf } from '../../errors.js';

/** The MCP spec's code for a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002;

/**
 * A JSON-RPC error for a read or get over the tenant's rate limit: in the implementation-defined server
 * error range, with the errorType and the wait in `data` (the REST routes answer 429 + Retry-After).
 */
export const RATE_LIMITED_CODE = -32029;

/**
 * A JSON-RPC error whose message goes on the wire as written (the SDK sends a thrown error's `code` and
 * `message`; its McpError would prefix "MCP error <code>:" to the message itself).
 */
export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/**
 * Domain errors (src/errors.ts) as JSON-RPC errors, by their TG_* code; unknown and unreachable stay
 * indistinguishable. A code without a JSON-RPC counterpart of its own (an unknown tenant) is an invalid
 * request whose message starts with the code.
 */
export async function answerOnWire<T>(kind: 'tool' | 'resource' | 'prompt', work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const gateway = gatewayErrorOf(error);
    if (!gateway || !(error instanceof DomainError)) throw error;
    switch (error.gatewayCode) {
      case 'TG_NOT_FOUND':
        throw new JsonRpcError(kind === 'resource' ? RESOURCE_NOT_FOUND : ErrorCode.InvalidParams, gateway.message);
      case 'TG_UPSTREAM_ERROR':
        throw new JsonRpcError(ErrorCode.InternalError, gateway.message);
      case 'TG_RATE_LIMITED':
        throw new JsonRpcError(RATE_LIMITED_CODE, gateway.message, { errorType: 'RATE_LIMITED', retryAfterMs: error.retryAfterMs });
      default:
        throw new JsonRpcError(ErrorCode.InvalidRequest, `${gateway.code}: ${gateway.message}`);
    }
  }
}

