// A store scan walks the whole keyspace on Redis (SCAN), which every tenant shares: a request that scans
// lets one tenant make Redis slow for all. Bounds are counted in lease groups instead (src/store/types.ts,
// docs/architecture.md#mcp-sessions). This pins who may still scan, so no new request path starts to.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/demo.js';

const root = packageRoot();

async function sources(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(join(root, dir), { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.ts')) found.push(relative(root, join(entry.parentPath, entry.name)));
  }
  return found.sort();
}

// Known callers (the approvals listing, the runtime keys' listing and revocation; their cap is a lease
// group): on Redis still a SCAN per request, to move to bounded indexes like the MCP sessions' lease groups.
const KNOWN_SCANS = ['src/admin/api-keys.ts', 'src/approvals/service.ts'];

describe('the state store on request paths', () => {
  it('is scanned by no module beyond the known ones, and never by the MCP endpoint or its sessions', async () => {
    const files = [...(await sources('src')), ...(await sources('routes')), ...(await sources('policies'))].filter((file) => !file.startsWith('src/store/'));
    const scanning: string[] = [];
    for (const file of files) if (/\.scan\(/.test(await readFile(join(root, file), 'utf8'))) scanning.push(file);
    expect(scanning).toEqual(KNOWN_SCANS);
  });

  it('runs no SCAN or KEYS inside the Redis store other than its one scan()', async () => {
    const redis = await readFile(join(root, 'src/store/redis.ts'), 'utf8');
    // One call site (on a Cluster it runs once per master).
    expect(redis.match(/\.(scan|keys)\(/g)).toEqual(['.scan(']);
    expect(redis).not.toMatch(/redis\.call\('(SCAN|KEYS)'/i);
  });
});
