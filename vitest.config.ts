import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Test files that measure another tenant's answers while they attack the gateway ("answers within 1 s while
 * attacked"). They run after the rest of the suite, one at a time: on this 2-core machine a neighbour file's
 * load stretched a victim's call past the bound (1.13 s in a CI run where the same test read at most 0.2 s
 * alone), which measured the neighbour, not the gateway. A file that imports test/helpers/liveness.ts or
 * test/helpers/victim-tenant.ts must be listed (test/architecture/under-attack-alone.test.ts).
 */
export const UNDER_ATTACK = [
  'test/integration/approval-flood.test.ts',
  'test/integration/budget-flood.test.ts',
  'test/integration/grep-regex-attack.test.ts',
  'test/integration/guardrails/oversize.test.ts',
  'test/integration/mcp/bus-amplification.test.ts',
  'test/integration/mcp/modern-input-required.test.ts',
  'test/integration/openapi-tools/ref-fanout.test.ts',
  'test/integration/pattern-attacks.test.ts',
  'test/integration/slow-body.test.ts',
  'test/integration/task-cap.test.ts',
  'test/integration/upstream-identity/credential-destinations.test.ts',
  'test/integration/upstream-identity/user-servers.test.ts',
  'test/integration/user-circuits.test.ts',
  'test/integration/user-mcp/catalog-bounds.test.ts',
  'test/integration/user-server-store-keys.test.ts',
  'test/routes/admin-api.test.ts',
  'test/routes/cedar-hostile.test.ts',
  'test/routes/code-mode-hostile.test.ts',
  'test/routes/code-mode.test.ts',
  'test/unit/code-mode/sandbox-fairness.test.ts',
  'test/unit/code-mode/sandbox-hard-stop.test.ts',
];

/** What both projects share; the root keeps only what runs once per run (the global setup). */
const shared = {
  testTimeout: 30_000,
  hookTimeout: 60_000,
  pool: 'forks',
  // A worker keeps its modules from one test file to the next: re-importing Fastify, the MCP SDK and the
  // app for each of ~140 files was more than half of a run. Tests therefore leave no module state behind:
  // no module mocks (test/architecture/shared-modules.test.ts), environment and globals restored, apps
  // and tracing shut down in their own hooks.
  isolate: false,
} as const;

export default defineConfig({
  test: {
    // Finds or starts the Redis the Redis tests share (a throwaway redis-server when installed), or says why they skip.
    globalSetup: ['test/global-setup.ts'],
    projects: [
      {
        test: {
          ...shared,
          name: 'suite',
          include: ['test/**/*.test.ts'],
          // The bench smoke tests drive load for about half of a full run and assert nothing about the product:
          // they run in `npm run test:bench` (vitest.bench.config.ts), never in `npm test`.
          exclude: [...configDefaults.exclude, 'test/bench/**', ...UNDER_ATTACK],
          // Integration tests spawn MCP servers and listen on ports; two workers match this 2-core machine.
          maxWorkers: 2,
        },
      },
      { test: { ...shared, name: 'under-attack', include: UNDER_ATTACK, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
