import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readByTenant, type FileAt } from '../../../src/config/load.js';
import { readByTenantInWorker } from '../../../src/config/read-in-worker.js';
import { CompactTenants } from '../../../src/config/compact-tenants.js';
import type { TenantConfig } from '../../../src/config/types.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-read-worker-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

// Tenants of the bench's shape (bench/tenants.ts), ids of this test's own (the in-thread read reuses tenants it read before by their text).
const fileOf = (count: number, last = ''): string => {
  const lines = ['auth:', '  jwt:', '    secret: a-secret-that-is-at-least-32-bytes-long!!', 'tenants:'];
  for (let i = 0; i < count; i += 1) {
    lines.push(`  wk${i}-${count}:`, '    tools:', '      allow:', '        - tool_*', '      deny:', `        - tool_${i % 20}`, '    policies:', '      rate-limit:', '        limit: 100', '        windowMs: 60000');
  }
  lines.push(last);
  return lines.join('\n');
};

describe('readByTenantInWorker', () => {
  const at = (): FileAt => ({ env: { LIMIT: '7' }, baseDir: dir, source: join(dir, 'config.yaml') });

  it('answers what the read in this thread gives: the same table of texts, moved', async () => {
    const text = fileOf(200, '  secret-limit:\n    limits:\n      maxInFlight: ${env:LIMIT}\n');
    const here = readByTenant(text, at())!;
    const there = (await readByTenantInWorker(Buffer.from(text), at()))!;
    expect(there).toBeDefined();
    expect(there.head).toStrictEqual(here.head);
    expect(Buffer.from(there.tenants.bytes).equals(here.tenants.bytes)).toBe(true);
    expect([...there.tenants.index]).toStrictEqual([...here.tenants.index]);
    expect([...there.tenants.order]).toStrictEqual([...here.tenants.order]);
    const tenants = new CompactTenants(there.tenants, (_, raw) => raw as TenantConfig);
    expect(tenants.size).toBe(201);
    expect(tenants.textAt(tenants.positionOf('secret-limit'))).toBe('{"limits":{"maxInFlight":7}}');
  });

  it('throws the configuration error of the read in this thread, naming the key', async () => {
    const text = fileOf(50, '  broken:\n    mode: sideways\n');
    const message = (() => {
      try {
        readByTenant(text, at());
      } catch (error) {
        return (error as Error).message;
      }
      return 'no error';
    })();
    expect(message).toContain('/tenants/broken/mode: must be one of');
    await expect(readByTenantInWorker(Buffer.from(text), at())).rejects.toThrow(message);
  });

  it('answers undefined for a file it does not read tenant by tenant', async () => {
    expect(await readByTenantInWorker(Buffer.from('tenants: { a: {} }\n'), at())).toBeUndefined();
  });
});
