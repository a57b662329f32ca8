// Token requests to authorization servers by service and credential kind — never a user label.
import type { Registry } from 'prom-client';
import { METRICS, sharedCounter } from '../observability/metric-table.js';
import type { UpstreamCredentialKind } from '../types.js';

export interface TokenMetrics {
  fetched(service: string, kind: UpstreamCredentialKind): void;
  failed(service: string, kind: UpstreamCredentialKind): void;
}

export function createTokenMetrics(registry: Registry | undefined): TokenMetrics {
  const fetches = sharedCounter(registry, METRICS.upstreamTokenFetches);
  const failures = sharedCounter(registry, METRICS.upstreamTokenFailures);
  return {
    fetched: (service, kind) => fetches.inc({ service, kind }),
    failed: (service, kind) => failures.inc({ service, kind }),
  };
}
