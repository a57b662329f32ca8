import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile, type YamlParse } from '../../../src/config/load.js';
import { createValueSharing } from '../../../src/config/shared-values.js';
import { compactOf } from '../../../src/config/compact-tenants.js';
import { dedent, splitTenantChunks } from '../../../src/config/tenant-chunks.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-chunks-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

const file = (name: string): string => join(dir, name);

const TENANTS = [
  'auth:',
  '  jwt: { secret: "a-secret-that-is-at-least-32-bytes-long!!" }',
  'tenants:',
  '  # the first tenant',
  '  acme:',
  '    tools: { allow: ["tool_*"], deny: [tool_9] }',
  '    roles:',
  '      viewer: { deny: ["send_*"] }',
  '',
  '  "beta corp":',
  '    mode: readonly',
  '    policies:',
  '      rate-limit: { limit: 10, windowMs: 1000, per: user }',
  '  # trailing comment of beta',
  '  gamma: {}',
  'audit: { sink: "off" }',
  '',
].join('\n');

describe('splitTenantChunks', () => {
  it('cuts each entry of a block mapping, comments and blank lines going with the entry before them', () => {
    const cut = splitTenantChunks(TENANTS)!;
    expect(cut.indent).toBe(2);
    expect(cut.chunks.map((chunk) => dedent(chunk, cut.indent).split('\n')[0])).toEqual(['acme:', '"beta corp":', 'gamma: {}']);
    expect(cut.chunks[1]).toContain('# trailing comment of beta');
    expect(cut.head).toBe('auth:\n  jwt: { secret: "a-secret-that-is-at-least-32-bytes-long!!" }\ntenants:\naudit: { sink: "off" }\n');
  });

  it('leaves to the whole-file parse what it cannot vouch for', () => {
    expect(splitTenantChunks('tenants: { a: {} }\n')).toBeUndefined();
    expect(splitTenantChunks('---\ntenants:\n  a: {}\n')).toBeUndefined();
    expect(splitTenantChunks('tenants:\n\ta: {}\n')).toBeUndefined();
    expect(splitTenantChunks('tenants:\n  - a\n')).toBeUndefined();
    expect(splitTenantChunks('tenants:\n    a: {}\n  b: {}\n')).toBeUndefined();
    expect(splitTenantChunks('tenants:\n  a: {}\ntenants:\n  b: {}\n')).toBeUndefined();
    expect(splitTenantChunks('server: { port: 1 }\n')).toBeUndefined();
  });
});

describe('loadConfigFile, tenant by tenant', () => {
  it('reads what the whole-file parse reads', async () => {
    await writeFile(file('cut.yaml'), TENANTS);
    // A document marker sends the same text through the whole-file parse.
    await writeFile(file('whole.yaml'), `---\n${TENANTS}`);
    const cut = await loadConfigFile(file('cut.yaml'));
    const whole = await loadConfigFile(file('whole.yaml'));
    expect(Object.keys(cut.tenants)).toEqual(['acme', 'beta corp', 'gamma']);
    expect(cut.tenants).toEqual(whole.tenants);
    expect({ ...cut, source: undefined }).toEqual({ ...whole, source: undefined });
  });

  it('a reload hands on the unchanged tenants as the same objects and reads the changed one again', async () => {
    const path = file('reload.yaml');
    await writeFile(path, TENANTS);
    const before = await loadConfigFile(path);
    await writeFile(path, TENANTS.replace('deny: [tool_9]', 'deny: [tool_8]'));
    // What the loader hands the YAML parser tells a tenant-by-tenant read from a whole-file one.
    const parsedTexts: string[] = [];
    const watched: YamlParse = (text, options) => (parsedTexts.push(text), parse(text, options));
    const after = await loadConfigFile(path, process.env, watched);
    // The file without its tenants, then the changed tenant alone.
    expect(parsedTexts.map((text) => text.split('\n')[0])).toEqual(['auth:', 'acme:']);
    expect(after.tenants['beta corp']).toBe(before.tenants['beta corp']);
    expect(after.tenants.gamma).toBe(before.tenants.gamma);
    expect(after.tenants.acme).not.toBe(before.tenants.acme);
    expect(after.tenants.acme!.tools.deny).toEqual(['tool_8']);
  });

  it('a tenant that refers to a secret is resolved again on every load', async () => {
    const path = file('secret.yaml');
    await writeFile(path, 'tenants:\n  acme:\n    limits: { maxInFlight: "${env:LIMIT}" }\n  other: {}\n');
    expect((await loadConfigFile(path, { LIMIT: '3' })).tenants.acme!.limits.maxInFlight).toBe(3);
    expect((await loadConfigFile(path, { LIMIT: '5' })).tenants.acme!.limits.maxInFlight).toBe(5);
  });

  it('a bad tenant is named by its key, and is refused on a reload too', async () => {
    const path = file('bad.yaml');
    await writeFile(path, TENANTS);
    await loadConfigFile(path);
    await writeFile(path, TENANTS.replace('mode: readonly', 'mode: sometimes'));
    await expect(loadConfigFile(path)).rejects.toThrow(`config ${path} is invalid: /tenants/beta corp/mode: must be one of ["default","readonly"]`);
  });

  it('an alias to another tenant\'s anchor and a duplicated id are read by the whole-file parse', async () => {
    const path = file('alias.yaml');
    await writeFile(path, 'tenants:\n  a:\n    tools: &shared { allow: ["x_*"] }\n  b:\n    tools: *shared\n');
    expect((await loadConfigFile(path)).tenants.b!.tools.allow).toEqual(['x_*']);
    await writeFile(path, 'tenants:\n  a: {}\n  b: {}\n  a: { mode: readonly }\n');
    await expect(loadConfigFile(path)).rejects.toThrow(/invalid YAML: Map keys must be unique/);
  });

  it('keeps its tenants as text and gives each one frozen, its defaults filled, when read', async () => {
    const path = file('compact.yaml');
    await writeFile(path, 'tenants:\n  a: { tools: { deny: [x] } }\n  b: { tools: { deny: [y] } }\n');
    const { tenants } = await loadConfigFile(path);
    const compact = compactOf(tenants)!;
    expect(compact.textAt(compact.positionOf('b'))).toBe('{"tools":{"deny":["y"]}}');
    expect(tenants.b!.tools.deny).toEqual(['y']);
    expect(tenants.a!.userMcp).toEqual(tenants.b!.userMcp);
    expect(tenants.a).toBe(tenants.a);
    expect(Object.isFrozen(tenants.a) && Object.isFrozen(tenants.a!.userMcp) && Object.isFrozen(tenants.a!.tools.deny)).toBe(true);
  });
});

describe('createValueSharing', () => {
  it('shares equal sub-values, keeps key order apart and copies the value itself', () => {
    const share = createValueSharing();
    const one = share({ x: { a: 1, b: [1, 2] }, y: { b: 1, a: 2 } });
    const two = share({ x: { a: 1, b: [1, 2] }, y: { a: 2, b: 1 } });
    expect(two.x).toBe(one.x);
    expect(two.y).not.toBe(one.y);
    expect(Object.keys(two.y)).toEqual(['a', 'b']);
    expect(two).not.toBe(one);
    expect(two).toEqual({ x: { a: 1, b: [1, 2] }, y: { a: 2, b: 1 } });
  });
});
