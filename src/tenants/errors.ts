import { DomainError, type ErrorCode } from '../errors.js';

const CODES = {
  NOT_FOUND: 'TG_NOT_FOUND',
  FORBIDDEN: 'TG_FORBIDDEN',
  CONFLICT: 'TG_CONFLICT',
  PRECONDITION_FAILED: 'TG_PRECONDITION_FAILED',
} as const satisfies Record<string, ErrorCode>;

export type TenantApiErrorCode = keyof typeof CODES;

/** A refusal of the tenant API (routes/admin-tenants.ts). */
export class TenantApiError extends DomainError {
  constructor(
    readonly code: TenantApiErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'TenantApiError';
  }

  get gatewayCode(): ErrorCode {
    return CODES[this.code];
  }
}

/** One answer for a tenant that does not exist and for one the caller may not see (docs/security-model.md#tool-name-oracle). */
export const noSuchTenant = (): TenantApiError => new TenantApiError('NOT_FOUND', 'no such tenant');
