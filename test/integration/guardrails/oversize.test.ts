// Guardrails' bounds (docs/governance.md#bounds): a 10 MiB result is scanned within its size and time bounds
// or handled as configured (block, truncate, pass), and while one tenant's huge results are scanned another
// tenant's calls still answer within a second (the scan yields between chunks).
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResult } from '../../../src/call/types.js';
import { bearer, buildTestApp, signToken, testConfig } from '../../helpers/build.js';
import { expectVictimServedDuring, repeatUntil, VICTIM_FUNCTIONS, VICTIM_TENANT, VICTIM_TENANT_CONFIG, victimOf } from '../../helpers/victim-tenant.js';
import { AWS } from '../../fixtures/guardrails/planted.js';

const MASK = [{ tools: ['*'], on: 'result', detect: ['secrets', 'pii'], action: 'mask' }];
const TEN_MIB = 10;

let app: FastifyInstance;
let victim: string;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  app = await buildTestApp(
    testConfig({
      functions: [...VICTIM_FUNCTIONS, { module: './test/fixtures/functions/guardrails.mjs' }],
      server: { bodyLimit: 1048576 },
      tenants: {
        acme: {},
        [VICTIM_TENANT]: VICTIM_TENANT_CONFIG,
        bounded: { guardrails: MASK },
        truncating: { guardrails: { rules: MASK, limits: { onOversize: 'truncate', maxScanMs: 20_000 } } },
        passing: { guardrails: { rules: MASK, limits: { onOversize: 'pass' } } },
        scanning: { guardrails: { rules: MASK, limits: { maxScanChars: 16 * 1024 * 1024, maxScanMs: 20_000 } } },
        hurried: { guardrails: { rules: MASK, limits: { maxScanChars: 16 * 1024 * 1024, maxScanMs: 1 } } },
      },
    }),
  );
  victim = await victimOf(app);
  for (const tenant of ['bounded', 'truncating', 'passing', 'scanning', 'hurried']) tokens[tenant] = await signToken({ tenant });
});
afterAll(async () => {
  await app?.close();
});

async function big(tenant: string): Promise<ToolResult> {
  const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(tokens[tenant]!), payload: { name: 'big_result', arguments: { mib: TEN_MIB, planted: ` key ${AWS}` } } });
  return res.json() as ToolResult;
}

describe('a 10 MiB result', () => {
  it('is withheld past the default 1 MiB scan bound (onOversize: block), naming the bound, not the content', async () => {
    const result = await big('bounded');
    expect(result).toMatchObject({ ok: false, error: { errorType: 'GUARDRAIL_BLOCKED', error: 'the result was withheld by guardrails: it is too large for the guardrails scan limit' } });
  });

  it('is cut to the bound and scanned with onOversize: truncate', async () => {
    const result = await big('truncating');
    expect(result.ok, result.error?.error).toBe(true);
    expect(result.truncated).toBe(true);
    expect(result.output.length).toBeLessThanOrEqual(1024 * 1024);
    expect(result.output).toMatch(/…\[truncated \d+ chars: past the guardrails scan limit\]$/);
    expect(result.output).not.toContain(AWS);
  });

  it('goes through unscanned with onOversize: pass', async () => {
    const result = await big('passing');
    expect(result.ok).toBe(true);
    expect(result.output.endsWith(` key ${AWS}`)).toBe(true);
  });

  it('is withheld when its scan would take longer than maxScanMs', async () => {
    const result = await big('hurried');
    expect(result.error?.error).toBe('the result was withheld by guardrails: it could not be scanned within the guardrails time limit');
  });

  it('is scanned whole within a 16 MiB bound (the planted key at its end masked) while another tenant answers within 1 s', async () => {
    let last: ToolResult | undefined;
    await expectVictimServedDuring(app, victim, (rounds) =>
      repeatUntil(rounds, async () => {
        last = await big('scanning');
      }, { maxRepeats: 8, maxMs: 30_000 }),
    );
    expect(last?.ok, last?.output.slice(0, 200)).toBe(true);
    expect(last?.output.endsWith(' key [REDACTED:aws_access_key]')).toBe(true);
  }, 90_000);
});
