import type { GatewayConfig } from './types.js';

/** A wildcard bind is reachable at the loopback address on this machine: the URL a person can open here. */
function reachable(address: string): string {
  const url = new URL(address);
  if (url.hostname === '0.0.0.0' || url.hostname === '[::]') url.hostname = '127.0.0.1';
  return url.origin;
}

/**
 * What a start from a config file logs once it listens (the demo prints its own banner with its keys):
 * where the API, its docs, the console (when on) and the metrics listener answer.
 */
export function startBanner(config: GatewayConfig, apiAddress: string, metricsAddress: string | undefined): { msg: string; url: string; config?: string; docs: string; console?: string; metrics?: string } {
  const url = reachable(apiAddress);
  const consoleUrl = config.console.enabled ? `${url}/console/` : undefined;
  const metrics = metricsAddress ? `${reachable(metricsAddress)}/metrics` : undefined;
  const parts = [`API ${url}`, `docs ${url}/docs`, ...(consoleUrl ? [`console ${consoleUrl}`] : []), ...(metrics ? [`metrics ${metrics}`] : [])];
  return {
    msg: `toolgate is serving${config.source ? ` ${config.source}` : ''}: ${parts.join(', ')}`,
    url,
    ...(config.source ? { config: config.source } : {}),
    docs: `${url}/docs`,
    ...(consoleUrl ? { console: consoleUrl } : {}),
    ...(metrics ? { metrics } : {}),
  };
}
