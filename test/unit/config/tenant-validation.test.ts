import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../../src/config/demo.js';
import { validateConfigObject } from '../../../src/config/load.js';

const load = (tenants: unknown) => validateConfigObject({ audit: { sink: 'off' }, tenants }, packageRoot(), 'tenants.yaml');

describe("a reload validates only the file's tenants that changed", () => {
  it('hands unchanged tenants on as the same objects, and validates (with defaults) only the changed and added ones', () => {
    const first = load({ a: { mode: 'readonly' }, b: {}, c: { tools: { deny: ['x'] } } });
    const second = load({ a: { mode: 'readonly' }, b: { tools: { deny: ['y'] } }, c: { tools: { deny: ['x'] } }, d: {} });
    expect(second.tenants.a).toBe(first.tenants.a);
    expect(second.tenants.c).toBe(first.tenants.c);
    expect(second.tenants.b).not.toBe(first.tenants.b);
    expect(second.tenants.b).toMatchObject({ tools: { allow: ['*'], deny: ['y'] }, mode: 'default', limits: { maxInFlight: 64 } });
    expect(second.tenants.d).toMatchObject({ tools: { allow: ['*'], deny: [] }, userMcp: { enabled: true } });
    // The same content under another id is validated for that id (its key is checked too).
    expect(() => load({ a: { mode: 'readonly' }, ['x'.repeat(129)]: { mode: 'readonly' } })).toThrow(/tenants/);
  });

  it('names the bad key of a changed tenant as a whole-file validation does, and reports the rest of the file first', () => {
    load({ a: {}, b: {} });
    expect(() => load({ a: {}, b: { tools: { allow: 'all' } } })).toThrow('config tenants.yaml is invalid: /tenants/b/tools/allow: must be array');
    expect(() => load({ a: {}, b: { tool: {} } })).toThrow('/tenants/b: unknown key "tool"');
    expect(() => validateConfigObject({ audit: { sink: 'nowhere' }, tenants: { a: {} } }, packageRoot(), undefined)).toThrow(/\/audit/);
  });
});
