// The verified inbound JWT behind a principal, kept beside it rather than in it: a principal is logged,
// audited and stored (approvals), its token must never be. Only RFC 8693 token exchange reads it, as the
// subject token sent to the authorization server (docs/security-model.md#upstream-identity).
import type { Principal } from '../call/principal.js';

const tokens = new WeakMap<Principal, string>();

export function rememberSubjectToken(principal: Principal, token: string): void {
  tokens.set(principal, token);
}

/** The JWT the principal was verified from; undefined for API keys, runtime keys and rebuilt principals. */
export function subjectTokenOf(principal: Principal): string | undefined {
  return tokens.get(principal);
}
