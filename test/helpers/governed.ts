// Config and state helpers for the governance route tests (approvals, rate limits, bindings, batch).
import type { GatewayConfig } from '../../src/config/types.js';
import { testConfig } from './build.js';

export interface GovernedState {
  executions: Array<{ title: string; user: string }>;
  events: string[];
}

export const governedState = (): GovernedState =>
  ((globalThis as { __toolgateGoverned?: GovernedState }).__toolgateGoverned ??= { executions: [], events: [] });

export function governedConfig(overrides: Record<string, unknown> = {}): GatewayConfig {
  const policies = {
    approval: { tools: ['create_ticket'], expiresMs: 60_000 },
    'rate-limit': { limit: 3, windowMs: 60_000, per: 'user', tools: ['limited_*'] },
  };
  return testConfig({
    functions: [{ module: './test/fixtures/functions/basic.mjs' }, { module: './test/fixtures/functions/governed.mjs' }],
    tenants: { acme: { policies }, globex: { policies } },
    ...overrides,
  });
}
