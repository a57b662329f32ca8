// Token requests to authorization servers by service and credential kind — never a user label.
import type { Registry } from 'prom-client';
import { counterIn } from '../mcp/client/metrics.js';
import type { UpstreamCredentialKind } from '../types.js';

export interface TokenMetrics {
  fetched(service: string, kind: UpstreamCredentialKind): void;
  failed(service: string, kind: UpstreamCredentialKind): void;
}

export function createTokenMetrics(registry: Registry | undefined): TokenMetrics {
  const fetches = counterIn(registry, 'toolgate_upstream_token_fetches_total', 'Tokens obtained from upstream authorization servers (client credentials, exchange, refresh, connect)', ['service', 'kind']);
  const failures = counterIn(registry, 'toolgate_upstream_token_failures_total', 'Failed token requests to upstream authorization servers', ['service', 'kind']);
  return {
    fetched: (service, kind) => fetches.inc({ service, kind }),
    failed: (service, kind) => failures.inc({ service, kind }),
  };
}
