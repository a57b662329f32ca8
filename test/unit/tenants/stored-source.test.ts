import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemoryBus } from '../../../src/store/bus.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { createTenantRecords, type TenantRecords } from '../../../src/tenants/records.js';
import { storedTenantSource } from '../../../src/tenants/stored-source.js';

const log = pino({ level: 'silent' });

/** Records that count the single-tenant reads, optionally with an index listing `padding` more ids. */
function counted(records: TenantRecords, padding = 0): { records: TenantRecords; reads: string[] } {
  const reads: string[] = [];
  const extra = Array.from({ length: padding }, (_, i) => `zz-${String(i).padStart(6, '0')}`);
  return {
    reads,
    records: {
      ...records,
      get: (id) => (reads.push(id), records.get(id)),
      ids: async (page) => {
        const listed = [...(await records.ids({ limit: 1_000_000 })), ...extra].filter((id) => page.after === undefined || id > page.after);
        return listed.slice(0, page.limit);
      },
    },
  };
}

describe('stored tenants: which file ids the store holds', () => {
  it('reads only the ids the store lists, and not one deleted since', async () => {
    const records = createTenantRecords(createMemoryStore(), createMemoryBus());
    for (const id of ['acme', 'globex', 'initech']) await records.create(id, {}, 'test');
    const deleted = await records.get('initech');
    expect(await records.remove(deleted!)).toBe(true);
    const { records: watched, reads } = counted(records);
    const fileIds = { *[Symbol.iterator]() { for (let i = 0; i < 5000; i += 1) yield `t${i}`; yield 'globex'; yield 'initech'; yield 'acme'; } };
    expect(await storedTenantSource(watched, log).existing(fileIds)).toEqual(['globex', 'acme']);
    expect(reads).toEqual(['globex', 'acme']);
  });

  it('reads every file id when the store lists more tenants than it reads whole', async () => {
    const records = createTenantRecords(createMemoryStore(), createMemoryBus());
    await records.create('acme', {}, 'test');
    const { records: watched, reads } = counted(records, 10_001);
    expect(await storedTenantSource(watched, log).existing(['t1', 'acme', 't2'])).toEqual(['acme']);
    expect(reads).toEqual(['t1', 'acme', 't2']);
  });
});
