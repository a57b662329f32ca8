// Token requests to authorization servers by service and credential kind — never a user label: a user's
// own servers (whose service keys name the user and the server the user chose) are one bucket.
import type { Registry } from 'prom-client';
import { METRICS, sharedCounter } from '../observability/metric-table.js';
import { USER_TOOL_LABEL } from '../observability/gateway-metrics.js';
import type { UpstreamCredentialKind } from '../call/upstream-credential.js';

/** The service whose token was asked for: a configured one by id, a user's own server only as such. */
export interface TokenTarget {
  service: string;
  userServer?: unknown;
}

const serviceLabel = (target: TokenTarget): string => (target.userServer === undefined ? target.service : USER_TOOL_LABEL);

export interface TokenMetrics {
  fetched(target: TokenTarget, kind: UpstreamCredentialKind): void;
  failed(target: TokenTarget, kind: UpstreamCredentialKind): void;
}

export function createTokenMetrics(registry: Registry | undefined): TokenMetrics {
  const fetches = sharedCounter(registry, METRICS.upstreamTokenFetches);
  const failures = sharedCounter(registry, METRICS.upstreamTokenFailures);
  return {
    fetched: (target, kind) => fetches.inc({ service: serviceLabel(target), kind }),
    failed: (target, kind) => failures.inc({ service: serviceLabel(target), kind }),
  };
}
