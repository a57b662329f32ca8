import { describe, expect, it } from 'vitest';
import { loadCedarEngine, type CedarLoadOptions } from '../../../src/cedar/load.js';
import type { CedarConfig } from '../../../src/config/types.js';
import { principal, tool } from '../../helpers/registry.js';

const wire = tool('wire', 'function', { inputSchema: { type: 'object', properties: { amount: { type: 'integer' }, memo: { type: 'string' } }, required: ['amount'] } });
const repoWrite = tool('github_push', 'function', { inputSchema: { type: 'object', properties: { repo: { type: 'string' } } } });
const report = tool('export_report', 'function', { readOnly: true, inputSchema: { type: 'object', properties: {} } });
const tools = [wire, repoWrite, report];
const facts = { mode: 'default' as const, depth: 0, now: Date.UTC(2026, 11, 7, 10, 0) }; // a Monday, 10:00 UTC

const engine = (policies: string, extra: Partial<CedarConfig> = {}, onDecision?: CedarLoadOptions['onDecision']) =>
  loadCedarEngine({ tenant: 'acme', config: { claims: { team: 'String', region: 'String' }, default: 'deny', policies, ...extra } as CedarConfig, tools, baseDir: process.cwd(), onDecision });

const clerk = principal({ tenant: 'acme', user: 'carol', roles: ['clerk'] });
const treasurer = principal({ tenant: 'acme', user: 'tom', roles: ['clerk', 'treasurer'] });

describe('Cedar decisions', () => {
  it('limits an amount by role, naming the determining policy', async () => {
    const cedar = await engine(`
      @id("everyone") permit(principal, action, resource);
      @id("wire-limit") forbid(principal, action == Action::"call", resource == Tool::"wire")
        when { context.arguments.amount > 1000 && !(principal.roles.contains("treasurer")) };`);
    expect(cedar.decideCall(clerk, wire, { amount: 500 }, facts)).toMatchObject({ allowed: true, policies: ['everyone'] });
    expect(cedar.decideCall(clerk, wire, { amount: 5000 }, facts)).toMatchObject({ allowed: false, policies: ['wire-limit'] });
    expect(cedar.decideCall(treasurer, wire, { amount: 5000 }, facts)).toMatchObject({ allowed: true });
    // Listed for both: some call (a small amount) could be permitted.
    expect(cedar.listable(clerk, wire, 'default').allowed).toBe(true);
  });

  it('keeps github write tools to the team in the claim', async () => {
    const cedar = await engine(`
      permit(principal, action, resource is Tool) unless { resource.name like "github_*" };
      @id("team") permit(principal, action == Action::"call", resource is Tool) when { resource.name like "github_*" && principal.claims has team && principal.claims.team == "platform" };`);
    const member = principal({ tenant: 'acme', user: 'pat', claims: { team: 'platform' } });
    const outsider = principal({ tenant: 'acme', user: 'oli', claims: { team: 'sales' } });
    expect(cedar.decideCall(member, repoWrite, { repo: 'x' }, facts)).toMatchObject({ allowed: true, policies: ['team'] });
    expect(cedar.decideCall(outsider, repoWrite, { repo: 'x' }, facts).allowed).toBe(false);
    expect(cedar.listable(outsider, repoWrite, 'default').allowed).toBe(false);
    expect(cedar.listable(member, repoWrite, 'default').allowed).toBe(true);
  });

  it('allows a tool only on weekdays in a time window, with an injected clock', async () => {
    const cedar = await engine(`
      @id("office-hours") permit(principal, action == Action::"call", resource == Tool::"wire")
        when { context.time.weekday >= 1 && context.time.weekday <= 5 && context.time.hour >= 8 && context.time.hour < 18 };`);
    expect(cedar.decideCall(clerk, wire, { amount: 1 }, facts).allowed).toBe(true);
    const saturday = { ...facts, now: Date.UTC(2026, 11, 12, 10, 0) };
    const night = { ...facts, now: Date.UTC(2026, 11, 7, 22, 0) };
    expect(cedar.decideCall(clerk, wire, { amount: 1 }, saturday).allowed).toBe(false);
    expect(cedar.decideCall(clerk, wire, { amount: 1 }, night).allowed).toBe(false);
    // The listing knows no time: wire is listed (some call could be permitted), the others are not.
    expect(cedar.listable(clerk, wire, 'default').allowed).toBe(true);
    expect(cedar.listable(clerk, report, 'default').allowed).toBe(false);
  });

  it('hides export_* outside the eu region claim, at listing and at a call', async () => {
    const cedar = await engine(`
      permit(principal, action, resource);
      @id("eu-only") forbid(principal, action, resource is Tool) when { resource.name like "export_*" } unless { principal.claims has region && principal.claims.region == "eu" };`);
    const us = principal({ tenant: 'acme', user: 'u', claims: { region: 'us' } });
    const eu = principal({ tenant: 'acme', user: 'e', claims: { region: 'eu' } });
    expect(cedar.listable(us, report, 'default')).toMatchObject({ allowed: false, policies: ['eu-only'] });
    expect(cedar.decideCall(us, report, {}, facts).allowed).toBe(false);
    expect(cedar.listable(eu, report, 'default').allowed).toBe(true);
  });

  it('refuses when a forbid reads an argument the call does not carry (fail closed)', async () => {
    const cedar = await engine(`
      permit(principal, action, resource);
      @id("memo") forbid(principal, action == Action::"call", resource == Tool::"wire") when { context.arguments.memo like "*urgent*" };`);
    expect(cedar.decideCall(clerk, wire, { amount: 1, memo: 'hello' }, facts).allowed).toBe(true);
    expect(cedar.decideCall(clerk, wire, { amount: 1 }, facts)).toMatchObject({ allowed: false, policies: ['memo'] });
    // A string argument past the cap is not handed over: the forbid errors and refuses.
    expect(cedar.decideCall(clerk, wire, { amount: 1, memo: 'x'.repeat(1_000_000) }, facts).allowed).toBe(false);
  });

  it('with default: permit, only forbids narrow', async () => {
    const cedar = await engine('forbid(principal, action == Action::"call", resource == Tool::"wire") when { context.arguments.amount > 1000 };', { default: 'permit' });
    expect(cedar.decideCall(clerk, report, {}, facts)).toMatchObject({ allowed: true, policies: ['toolgate.default-permit'] });
    expect(cedar.decideCall(clerk, wire, { amount: 2000 }, facts).allowed).toBe(false);
  });

  it('decides resources and prompts with read and get', async () => {
    const cedar = await engine(`
      @id("docs") permit(principal, action == Action::"read", resource) when { resource.uri like "mcp://docs/*" };
      @id("prompts") permit(principal, action == Action::"get", resource) when { principal.roles.contains("clerk") };`);
    expect(cedar.decideResource(clerk, 'mcp://docs/readme', facts)).toMatchObject({ allowed: true, policies: ['docs'] });
    expect(cedar.decideResource(clerk, 'mcp://hr/salaries', facts).allowed).toBe(false);
    expect(cedar.decidePrompt(clerk, 'docs__summary', facts).allowed).toBe(true);
    expect(cedar.decidePrompt(principal({ tenant: 'acme', user: 'z' }), 'docs__summary', facts).allowed).toBe(false);
  });

  it('answers a call again from its cache when nothing a policy reads differs, and counts it', async () => {
    const outcomes: string[] = [];
    const cedar = await engine(
      `@id("everyone") permit(principal, action, resource);
      @id("wire-limit") forbid(principal, action == Action::"call", resource == Tool::"wire") when { context.arguments.amount > 1000 };`,
      {},
      (_tenant, action, outcome) => outcomes.push(`${action}:${outcome}`),
    );
    expect(cedar.decideCall(clerk, wire, { amount: 500, memo: 'a' }, facts).allowed).toBe(true);
    // The memo, the time and the depth are read by no policy: the same decision, not evaluated again.
    expect(cedar.decideCall(clerk, wire, { amount: 500, memo: 'b' }, { ...facts, now: facts.now + 3_600_000, depth: 2 }).allowed).toBe(true);
    expect(cedar.evaluations).toBe(1);
    expect(cedar.decideCall(clerk, wire, { amount: 5000, memo: 'a' }, facts)).toMatchObject({ allowed: false, policies: ['wire-limit'] });
    expect(cedar.decideCall(treasurer, wire, { amount: 500 }, facts).allowed).toBe(true);
    expect(cedar.evaluations).toBe(3);
    expect(outcomes).toEqual(['call:allow', 'call:allow', 'call:deny', 'call:allow']);
  });

  it('tells a missing argument from a present one in its cache (fail closed either way)', async () => {
    const cedar = await engine(`
      permit(principal, action, resource);
      @id("memo") forbid(principal, action == Action::"call", resource == Tool::"wire") when { context.arguments.memo like "*urgent*" };`);
    for (let round = 0; round < 2; round += 1) {
      expect(cedar.decideCall(clerk, wire, { amount: 1, memo: 'hello' }, facts).allowed).toBe(true);
      expect(cedar.decideCall(clerk, wire, { amount: 1 }, facts)).toMatchObject({ allowed: false, policies: ['memo'] });
      expect(cedar.decideCall(clerk, wire, { amount: 1, memo: 'so urgent' }, facts).allowed).toBe(false);
    }
    expect(cedar.evaluations).toBe(3);
  });

  it('caches listing decisions per principal shape and tool', async () => {
    const cedar = await engine('permit(principal, action, resource);');
    cedar.listable(clerk, wire, 'default');
    cedar.listable(principal({ tenant: 'acme', user: 'carol', roles: ['clerk'] }), wire, 'default');
    expect(cedar.listingEvaluations).toBe(1);
    cedar.listable(treasurer, wire, 'default');
    expect(cedar.listingEvaluations).toBe(2);
  });
});

describe('Cedar load errors', () => {
  it('names the policy and position of an unknown attribute', async () => {
    await expect(engine('permit(principal, action, resource);\n@id("typo") forbid(principal, action == Action::"call", resource) when { context.arguments.amout > 3 };')).rejects.toThrow(
      /^policy typo at policies:2:\d+: .*amout.*did you mean `amount`/,
    );
  });

  it('names a type error', async () => {
    await expect(engine('@id("types") permit(principal, action == Action::"call", resource) when { context.arguments.memo > 3 };')).rejects.toThrow(/policy types at .*:1:\d+/);
  });

  it('names a syntax error with its position', async () => {
    await expect(engine('permit(principal, action, resource)\nforbid(principal action, resource);')).rejects.toThrow(/^at policies:2:\d+: /);
  });
});
