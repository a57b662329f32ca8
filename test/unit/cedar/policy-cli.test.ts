import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCedarEngine } from '../../../src/cedar/load.js';
import type { CedarConfig } from '../../../src/config/types.js';
import { PolicyConfigError, PolicyUsageError, runPolicyCli, type TenantLoader } from '../../../src/policy-cli/cli.js';
import { tool } from '../../helpers/registry.js';

const POLICIES = 'test/fixtures/cedar/acme.cedar';
const CASES = 'test/fixtures/cedar/acme-cases.yaml';
const noTenants: TenantLoader = () => Promise.reject(new Error('no tenant expected'));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-policy-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('toolgate policy test', () => {
  it('passes a case file that matches the policies (exit 0)', async () => {
    const result = await runPolicyCli(['test', POLICIES, '--cases', CASES], {}, noTenants);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('ok    a clerk cannot wire 5,000: deny by wire-limit');
    expect(result.stdout).toMatch(/5 cases passed\n$/);
  });

  it('fails on a mismatch, naming the case, what was expected and what came (exit 1)', async () => {
    const cases = (await readFile(CASES, 'utf8')).replace('arguments: { amount: 5000 }\n    time: 2026-12-07T10:00:00Z\n    expect: deny', 'arguments: { amount: 5000 }\n    time: 2026-12-07T10:00:00Z\n    expect: allow');
    const path = join(dir, 'wrong.yaml');
    await writeFile(path, cases);
    const result = await runPolicyCli(['test', POLICIES, '--cases', path], {}, noTenants);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toContain('FAIL  a clerk cannot wire 5,000: expected allow by wire-limit, got deny by wire-limit');
    expect(result.stdout).toMatch(/1 of 5 cases failed\n$/);
  });

  it('refuses a policy file that does not validate, naming the policy and position (exit 78)', async () => {
    const path = join(dir, 'typo.cedar');
    await writeFile(path, 'permit(principal, action, resource);\n@id("typo") forbid(principal, action == Action::"call", resource) when { context.arguments.amout > 1 };\n');
    await expect(runPolicyCli(['test', path, '--cases', CASES], {}, noTenants)).rejects.toThrow(PolicyConfigError);
    await expect(runPolicyCli(['test', path, '--cases', CASES], {}, noTenants)).rejects.toThrow(/policy typo at .*typo\.cedar:2:\d+/);
  });

  it('wants --cases and one target', async () => {
    await expect(runPolicyCli(['test', POLICIES], {}, noTenants)).rejects.toThrow(PolicyUsageError);
    await expect(runPolicyCli(['test', '--cases', CASES], {}, noTenants)).rejects.toThrow(PolicyUsageError);
  });
});

describe('toolgate policy schema', () => {
  it("prints the tenant's generated schema", async () => {
    const tools = [tool('wire', 'function', { inputSchema: { type: 'object', properties: { amount: { type: 'integer' } } } })];
    const engine = await loadCedarEngine({ tenant: 'acme', config: { policies: 'permit(principal, action, resource);', claims: { team: 'String' }, default: 'deny' } as CedarConfig, tools, baseDir: process.cwd() });
    const loader: TenantLoader = async (config, tenant) => {
      expect([config, tenant]).toEqual(['gateway.yaml', 'acme']);
      return { engine, tools };
    };
    const result = await runPolicyCli(['schema', 'acme', '--config', 'gateway.yaml'], {}, loader);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/entity User/);
    expect(result.stdout).toMatch(/team\?: __cedar::String|team\?: String/);
    expect(result.stdout).toMatch(/amount: (__cedar::)?Long/);
    expect(result.stdout).toMatch(/action "?call"?/);
  });
});
