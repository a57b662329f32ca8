import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadConfigFile } from '../../../src/config/load.js';

const dir = mkdtempSync(join(tmpdir(), 'toolgate-completed-tenants-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The issue-46 shape with every text its own: the same tools and roles, a rate limit each.
const tenantOf = (limit: number) => ({
  tools: { allow: ['tool_*'], deny: ['tool_01'] },
  roles: { viewer: { deny: ['tool_1*'] } },
  policies: { 'rate-limit': { limit, windowMs: 60_000, per: 'user' }, approval: { tools: ['tool_19'] } },
});

describe('file tenants completed on first use', () => {
  it('share the parts their texts have in common, each with its own limit, frozen', async () => {
    const file = join(dir, 'config.yaml');
    writeFileSync(file, stringify({ auth: { apiKeys: [] }, tenants: { a: tenantOf(100), b: tenantOf(101) } }));
    const { tenants } = await loadConfigFile(file);
    const [a, b] = [tenants.a!, tenants.b!];
    expect(a.tools).toBe(b.tools);
    expect(a.roles).toBe(b.roles);
    expect(a.policies.approval).toBe(b.policies.approval);
    expect([(a.policies['rate-limit'] as { limit: number }).limit, (b.policies['rate-limit'] as { limit: number }).limit]).toEqual([100, 101]);
    expect(a).not.toBe(b);
    expect([Object.isFrozen(a), Object.isFrozen(a.tools), Object.isFrozen(a.tools.allow)]).toEqual([true, true, true]);
  });
});
