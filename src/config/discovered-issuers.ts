// Which authorization servers a remote MCP service may name through its own metadata (RFC 9728), and why
// (docs/security-model.md#where-credentials-go): a credential toolgate holds — the
// caller's verified token for tokenExchange, the operator's clientSecret — goes only to a server the operator
// named. One rule for the config's validation and for every token request at run time.
import type { UpstreamAuthConfig } from './types.js';

/** What of toolgate's own a token request of this `auth` carries, described for a refusal; undefined: nothing the server did not issue. */
export function heldCredentialOf(auth: UpstreamAuthConfig): string | undefined {
  if (auth.type === 'tokenExchange') return "the caller's token (tokenExchange)";
  return auth.clientSecret !== undefined ? 'the clientSecret' : undefined;
}

/**
 * The servers a discovered service may name, matched exactly: the configured `trustedIssuers`, or none at
 * all when a held credential would go there. Undefined: any server (it receives only what it issued itself —
 * a client it registered, its own codes and refresh tokens).
 */
export function trustedIssuersOf(auth: UpstreamAuthConfig): readonly string[] | undefined {
  if (auth.trustedIssuers !== undefined) return auth.trustedIssuers;
  return heldCredentialOf(auth) !== undefined ? [] : undefined;
}
