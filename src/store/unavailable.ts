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
