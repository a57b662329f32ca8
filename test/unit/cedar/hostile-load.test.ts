import { describe, expect, it } from 'vitest';
import { loadCedarEngine } from '../../../src/cedar/load.js';
import { validateOffThread } from '../../../src/cedar/validate.js';
import type { CedarConfig } from '../../../src/config/types.js';

const load = (policies: string) => loadCedarEngine({ tenant: 'evil', config: { claims: {}, default: 'deny', policies } as CedarConfig, tools: [], baseDir: process.cwd() });

describe('hostile policy sets are bounded at load', () => {
  it('refuses 10,000 policies before parsing them', async () => {
    const started = performance.now();
    const many = Array.from({ length: 10_000 }, (_, i) => `permit(principal, action, resource) when { ${i} == ${i} };`).join('\n');
    await expect(load(many)).rejects.toThrow(/longer than 262144 characters|more than 200 policies/);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('refuses more policies than the cap before parsing them', async () => {
    const many = Array.from({ length: 201 }, () => 'permit(principal,action,resource);').join('\n');
    await expect(load(many)).rejects.toThrow(/^more than 200 policies$/);
  });

  it('refuses text over the size cap', async () => {
    await expect(load(`// ${'x'.repeat(300_000)}\npermit(principal, action, resource);`)).rejects.toThrow(/longer than 262144 characters/);
  });

  it('refuses brackets nested deeper than the cap, naming where', async () => {
    const deep = `permit(principal, action, resource) when { ${'('.repeat(5000)}true${')'.repeat(5000)} };`;
    await expect(load(deep)).rejects.toThrow(/^at policies:1:\d+: expressions are nested deeper than 32 brackets/);
  });

  it('a deep if-chain without brackets fails in the worker, not on the event loop', async () => {
    const chain = `${'if true then '.repeat(9_000)}true${' else false'.repeat(9_000)}`;
    const started = performance.now();
    await expect(load(`permit(principal, action, resource) when { ${chain} };`)).rejects.toThrow(/could not be parsed|longer than/);
    expect(performance.now() - started).toBeLessThan(15_000);
  });

  it('bounds the like patterns of a set together, naming the policy that passes the cap', async () => {
    // One such pattern against an 8,192-character argument costs ~10 ms at every call; 200 of them, 2 s.
    const like = (id: string, chars: number) => `@id("${id}") permit(principal, action == Action::"call", resource) when { resource.name like "*${'a'.repeat(chars - 2)}b" };`;
    await expect(load([like('short', 200), like('long', 400)].join('\n'))).rejects.toThrow(/^policy long: `like` patterns longer than 512 characters in all/);
    await expect(load([like('short', 200), like('fits', 312)].join('\n'))).resolves.toBeDefined();
  });

  it('stops a validation past its deadline', async () => {
    // Enough text that parsing alone outlasts 1 ms on any machine (a one-line set validated within 1 ms on an idle one).
    const condition = Array.from({ length: 40 }, (_, index) => `${index} + ${index} == ${2 * index}`).join(' && ');
    const text = Array.from({ length: 150 }, (_, index) => `@id("p${index}") permit(principal, action, resource) when { ${condition} };`).join('\n');
    const reply = await validateOffThread({ text, schema: {} }, 1);
    expect(reply).toMatchObject({ ok: false, problems: [{ message: 'parsing and validating the policies took longer than 1 ms' }] });
  });
});
