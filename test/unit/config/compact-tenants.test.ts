import { describe, expect, it } from 'vitest';
import { changedTenantIds, CompactTenants, CompactTenantsBuilder, compactOf, sameConfig, sameTenant, tenantIds, tenantIdView } from '../../../src/config/compact-tenants.js';
import type { GatewayConfig, TenantConfig } from '../../../src/config/types.js';

// Stands in for the loader's completion (validation with defaults): marks what it made, frozen.
let completed = 0;
const complete = (id: string, raw: unknown): TenantConfig => {
  completed += 1;
  return Object.freeze({ ...(raw as object), completedFor: id }) as unknown as TenantConfig;
};

const IDS = ['zeta', 'a', 'ab', 'beta corp', 'é-tenant', '日本', '10', '2', 'a\u0000b', 'Z'];
const textOf = (id: string): string => JSON.stringify({ tools: { deny: [`deny-${id}`] } });

function tableOf(ids: readonly string[], text = textOf): CompactTenants {
  const builder = new CompactTenantsBuilder();
  for (const [at, id] of ids.entries()) expect(builder.add(id, text(id), at % 2 === 0 ? 'd'.repeat(31) + String(at % 10) : undefined)).toBe(true);
  return new CompactTenants(builder.build(), complete);
}

describe('CompactTenants', () => {
  it('finds every id, and no other, and keeps the file order', () => {
    const table = tableOf(IDS);
    expect(table.size).toBe(IDS.length);
    for (const [at, id] of IDS.entries()) {
      expect(table.positionOf(id)).toBe(at);
      expect(table.idAt(at)).toBe(id);
      expect(table.textAt(at)).toBe(textOf(id));
      expect(table.digestAt(at)).toBe(at % 2 === 0 ? 'd'.repeat(31) + String(at % 10) : undefined);
    }
    for (const unknown of ['', 'b', 'zeta ', 'A', 'a\u0000', '__proto__', 'constructor']) expect(table.positionOf(unknown)).toBe(-1);
    expect(table.ids()).toEqual(IDS);
    expect(table.sortedIds()).toEqual([...IDS].sort());
  });

  it('tells a tenant whose text an earlier one shares, and makes a tenant afresh without remembering it', () => {
    const shared = JSON.stringify({ tools: { allow: ['tool_*'] } });
    const texts = [shared, textOf('b'), shared, textOf('d'), shared];
    const builder = new CompactTenantsBuilder();
    for (const [at, text] of texts.entries()) builder.add(`t${at}`, text, at % 2 === 0 ? 'd'.repeat(32) : undefined);
    const table = new CompactTenants(builder.build(), complete);
    expect(Array.from({ length: table.size }, (_, at) => table.sharesEarlierText(at))).toEqual([false, false, true, false, true]);
    const before = completed;
    const fresh = table.freshTenantAt(3);
    expect(fresh).toEqual(table.tenantAt(3));
    // Made again on each call, and not the object the cache hands out.
    expect(table.freshTenantAt(3)).not.toBe(fresh);
    expect(table.tenantAt(3)).not.toBe(fresh);
    expect(completed - before).toBe(3);
  });

  it('refuses an id added twice', () => {
    const builder = new CompactTenantsBuilder();
    expect(builder.add('a', '{}', undefined)).toBe(true);
    expect(builder.add('a', '{"mode":"readonly"}', undefined)).toBe(false);
    expect(new CompactTenants(builder.build(), complete).textAt(0)).toBe('{}');
  });

  it('keeps one copy of a text several tenants share, each tenant with its own id and digest', () => {
    const templates = [JSON.stringify({ tools: { allow: ['tool_*'] } }), JSON.stringify({ tools: { deny: ['tool_1*'] } }), '{}'];
    const ids = Array.from({ length: 3000 }, (_, i) => `t${String(i).padStart(6, '0')}`);
    const builder = new CompactTenantsBuilder();
    for (const [at, id] of ids.entries()) builder.add(id, at === 7 ? Buffer.from(templates[at % 3]!) : templates[at % 3]!, at % 2 === 0 ? `digest-of-${id}`.padEnd(32, '.') : undefined);
    // One text of a kind never seen before (not shared), and one whose bytes equal a template's.
    builder.add('odd', JSON.stringify({ tools: { deny: ['odd'] } }), undefined);
    const data = builder.build();
    const idBytes = ids.reduce((sum, id) => sum + id.length, 0) + 'odd'.length;
    const digestBytes = 1500 * 32;
    const textBytes = templates.reduce((sum, text) => sum + text.length, 0) + JSON.stringify({ tools: { deny: ['odd'] } }).length;
    expect(data.bytes.byteLength).toBe(idBytes + digestBytes + textBytes);
    const table = new CompactTenants(data, complete);
    for (const [at, id] of ids.entries()) {
      expect([table.idAt(at), table.textAt(at), table.digestAt(at)]).toEqual([id, templates[at % 3], at % 2 === 0 ? `digest-of-${id}`.padEnd(32, '.') : undefined]);
    }
    expect(table.textAt(ids.length)).toBe(JSON.stringify({ tools: { deny: ['odd'] } }));
    expect(sameTenant(table.record, tableOf(['t000003'], () => templates[0]!).record, 't000003')).toBe(true);
  });

  it('reads like a record of tenants, making a tenant only when one is read', () => {
    const table = tableOf(IDS, (id) => JSON.stringify({ tools: { deny: [`only-${id}`] } }));
    const tenants = table.record;
    const before = completed;
    expect(Object.keys(tenants)).toEqual(IDS);
    expect(Object.hasOwn(tenants, 'beta corp') && 'ab' in tenants).toBe(true);
    expect(Object.hasOwn(tenants, 'b') || 'toString' in tenants || '__proto__' in tenants).toBe(false);
    expect(tenants.b).toBeUndefined();
    expect(tenantIds(tenants)).toEqual(IDS);
    expect(completed).toBe(before);
    const read = tenants['日本']! as unknown as { tools: { deny: string[] }; completedFor: string };
    expect(read).toEqual({ tools: { deny: ['only-日本'] }, completedFor: '日本' });
    expect(tenants['日本']).toBe(read);
    expect(completed).toBe(before + 1);
    expect(Object.entries(tenants).map(([id, tenant]) => [id, (tenant as unknown as { completedFor: string }).completedFor])).toEqual(IDS.map((id) => [id, id]));
    expect(Reflect.set(tenants, 'new', {})).toBe(false);
    expect(Reflect.deleteProperty(tenants, 'a')).toBe(false);
    expect(compactOf(tenants)).toBe(table);
    expect(compactOf({})).toBeUndefined();
  });

  it('tells a changed tenant by its text, and an unchanged config', () => {
    const before = tableOf(['a', 'b', 'c']);
    const after = tableOf(['a', 'b', 'd'], (id) => (id === 'b' ? '{"mode":"readonly"}' : textOf(id)));
    expect(sameTenant(before.record, after.record, 'a')).toBe(true);
    expect(sameTenant(before.record, after.record, 'b')).toBe(false);
    expect(sameTenant(before.record, after.record, 'c')).toBe(false);
    expect(sameTenant(before.record, after.record, 'nowhere')).toBe(true);
    expect(changedTenantIds(before.record, after.record)).toEqual(['b', 'd']);
    expect(changedTenantIds(before.record, tableOf(['c', 'a', 'b']).record)).toEqual([]);
    expect(changedTenantIds(undefined, after.record)).toEqual(['a', 'b', 'd']);
    expect(changedTenantIds(before.record, { a: {} as TenantConfig })).toEqual(['a']);
    const config = (tenants: Readonly<Record<string, TenantConfig>>): GatewayConfig => ({ baseDir: '/', source: undefined, tenants }) as unknown as GatewayConfig;
    expect(sameConfig(config(before.record), config(tableOf(['a', 'b', 'c']).record))).toBe(true);
    expect(sameConfig(config(before.record), config(after.record))).toBe(false);
    expect(sameConfig(config(before.record), config(tableOf(['a', 'c', 'b']).record))).toBe(false);
  });

  it('carries a text over as bytes, unchanged', () => {
    const first = tableOf(['a', 'b']);
    const builder = new CompactTenantsBuilder();
    builder.add('b', first.textBytesAt(1), first.digestAt(1));
    builder.add('c', '{"mode":"readonly"}', undefined);
    const second = new CompactTenants(builder.build(), complete);
    expect([second.idAt(0), second.textAt(0), second.digestAt(0)]).toEqual(['b', textOf('b'), undefined]);
    expect(second.textAt(1)).toBe('{"mode":"readonly"}');
    expect(sameTenant(first.record, second.record, 'b')).toBe(true);
  });

  it('lists the ids in file order again on every pass, without making a tenant', () => {
    const table = tableOf(IDS);
    const before = completed;
    const view = tenantIdView(table.record);
    expect(Array.isArray(view)).toBe(false);
    expect([...view]).toEqual(IDS);
    expect([...view]).toEqual(IDS);
    expect(completed).toBe(before);
    expect(tenantIdView({ b: {} as TenantConfig, a: {} as TenantConfig })).toEqual(['b', 'a']);
  });
});
