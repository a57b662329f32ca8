// The one error an exchange with an upstream's authorization server fails with (docs/security-model.md#upstream-identity).
import { DomainError } from '../errors.js';

export type AuthServerErrorCode = 'unavailable' | 'invalid_grant' | 'refused' | 'invalid_response';

/** A failed exchange with an authorization server. The message never holds a token or the server's body. */
export class AuthServerError extends DomainError {
  readonly gatewayCode = 'TG_UPSTREAM_ERROR';
  constructor(
    readonly code: AuthServerErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'AuthServerError';
  }
}
