import type { Principal } from '../call/principal.js';

/**
 * The users who minted a principal's runtime key, directly or through other runtime keys: each of them saw
 * the key (or minted its parent), so each can act as this principal. Empty for config keys and JWTs.
 * Separation of duties compares these users (docs/security-model.md#separation-of-duties).
 */
export function keyMinters(principal: Principal): string[] {
  const credential = principal.credential;
  if (credential?.kind !== 'runtimeKey') return [];
  return [...new Set(credential.issuers.map((issuer) => issuer.user))];
}
