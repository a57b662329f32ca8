// How a catalog read or prompt get fails, for both wires (serve-resources.ts, routes/resources.ts) and the audit.
import { DomainError } from '../errors.js';

/**
 * Unknown and not reachable answer alike: nothing tells a caller what other tenants or users have.
 * `reason` is for the audit log only: `denied` when the tenant's own globs refuse a name of a service the
 * caller reaches, `unknown` for everything else.
 */
export class CatalogNotFound extends DomainError {
  readonly gatewayCode = 'TG_NOT_FOUND';
  constructor(
    message: string,
    readonly reason: 'unknown' | 'denied' = 'unknown',
  ) {
    super(message);
  }
}

/** A reachable service failed to answer (down, timed out, refused the request). */
export class CatalogUpstreamError extends DomainError {
  readonly gatewayCode = 'TG_UPSTREAM_ERROR';
}

/** The tenant's rate limit (policies.rate-limit) refused the read or get before any upstream was asked. */
export class CatalogRateLimited extends DomainError {
  readonly gatewayCode = 'TG_RATE_LIMITED';
  constructor(
    message: string,
    override readonly retryAfterMs: number,
  ) {
    super(message);
  }
}
