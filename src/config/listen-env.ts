import { ConfigError } from './interpolate.js';
import type { GatewayConfig } from './types.js';

// The listeners' addresses: the config file's, overridden by the environment (docs/configuration.md#environment),
// so one file serves several replicas on one machine and a second demo can run beside the first.

export interface ListenAddress {
  host: string;
  port: number;
  /** The settings that chose the port, named when it cannot be bound. */
  key: string;
  /** What to change when the port is taken. */
  hint: string;
}

function portFrom(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const text = env[name];
  if (text === undefined || text === '') return undefined;
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) throw new ConfigError(`environment ${name}: must be a port number 0-65535 (0 picks a free one), not ${JSON.stringify(text.slice(0, 40))}`);
  return Number(text);
}

/** The API listener (`HOST`, `PORT`) and the metrics listener (`METRICS_HOST`, `METRICS_PORT`) when it is on. */
export function listenAddresses(config: GatewayConfig, env: NodeJS.ProcessEnv): { api: ListenAddress; metrics: ListenAddress | undefined } {
  const api: ListenAddress = {
    host: env.HOST || config.server.host,
    port: portFrom(env, 'PORT') ?? config.server.port,
    key: 'server.port, or PORT',
    hint: 'set PORT to a free port (0 picks one), or stop the process that holds it',
  };
  const metrics: ListenAddress | undefined = config.metrics.enabled
    ? {
        host: env.METRICS_HOST || config.metrics.host,
        port: portFrom(env, 'METRICS_PORT') ?? config.metrics.port,
        key: 'metrics.port, or METRICS_PORT',
        hint: 'set METRICS_PORT to a free port (0 picks one; metrics.enabled: false turns the listener off), or stop the process that holds it',
      }
    : undefined;
  return { api, metrics };
}
