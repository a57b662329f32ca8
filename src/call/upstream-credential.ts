import type { Principal } from './principal.js';

/** Which identity an upstream call carried (docs/security-model.md#upstream-identity). */
export type UpstreamCredentialKind = 'service' | 'user' | 'exchanged';

/** The credential one upstream request carries: the header value, and what audit and traces may say of it. */
export interface UpstreamCredential {
  readonly authorization: string;
  readonly kind: UpstreamCredentialKind;
  /** The first 12 hex characters of the token's SHA-256: tells tokens apart in audit without revealing one. */
  readonly tokenHash: string;
}

/** The credentials of one upstream service with an `auth` object. Failures are ToolErrors (CONNECTION_REQUIRED…). */
export interface ServiceCredentials {
  /** The credential of a call made by this principal. */
  forCall(principal: Principal, signal: AbortSignal): Promise<UpstreamCredential>;
  /** The service's own credential for traffic outside a call (an MCP session's initialize and listing), if it has one. */
  forSession(): Promise<UpstreamCredential | undefined>;
}
