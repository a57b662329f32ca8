import { errors } from '../errors.js';

/** How long a caller should wait before retrying while the store is unavailable. */
export const STORE_RETRY_AFTER_MS = 1000;

export type StoreUnavailableError = InstanceType<typeof errors.TG_STORE_UNAVAILABLE>;

/** The one error every store operation throws when the store did not answer (down, unreachable, too slow). */
export function storeUnavailable(operation: string, cause: unknown): StoreUnavailableError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  const error = new errors.TG_STORE_UNAVAILABLE(`the state store is unavailable (${operation}: ${reason}); retry later`);
  error.cause = cause;
  return error;
}

export function isStoreUnavailable(error: unknown): error is StoreUnavailableError {
  return error instanceof errors.TG_STORE_UNAVAILABLE;
}

// Node's codes for a server certificate that does not verify (docs/configuration.md#store, `tls.ca`).
const TLS_TRUST_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** True when `error` (or what it wraps: a Cluster reports its nodes' last error) is a certificate the client does not trust. */
export function isTlsTrustError(error: unknown, depth = 0): boolean {
  if (!(error instanceof Error) || depth > 3) return false;
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== undefined && TLS_TRUST_CODES.has(code)) return true;
  const wrapped = (error as Error & { lastNodeError?: unknown }).lastNodeError ?? error.cause;
  return isTlsTrustError(wrapped, depth + 1);
}
