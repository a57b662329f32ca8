import type { Agent } from 'undici';
import type { GatewayConfig } from './config/types.js';
import { createFunctionProvider } from './executors/function-provider.js';
import type { ProviderSpec } from './gateway.js';
import type { Logger } from './types.js';

export interface ProviderDeps {
  log: Logger;
  agent: Agent;
}

/**
 * Every tool source the config asks for. Keys are the config each provider was built from, so a
 * reload reuses providers (and their upstream connections) whose part of the config did not change.
 */
export function providerSpecsFor(deps: ProviderDeps): (config: GatewayConfig) => ProviderSpec[] {
  return (config) => [
    {
      // Module mtimes are part of the key: an edited module is re-imported on reload.
      key: `function:${JSON.stringify(config.functions)}:${Date.now()}`,
      create: () => createFunctionProvider(config.functions, deps.agent),
    },
  ];
}
