// The tenant shape of bench/tenants.ts, shared by the memory benches (bench/tenants-memory.ts, bench/tenant-heap.ts):
// an allow list, a deny, a role, a rate limit and an approval rule over 20 function tools.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT } from 'jose';

export const SECRET = 'bench-secret-that-is-at-least-32-bytes-long!!';

// Its deny is one of 20, so tenants repeat 20 texts; `distinct` gives every tenant a rate limit of its own
// (`100 + i`, as bench/tenants.ts --distinct), so no two tenants' texts are the same.
export const tenantOf = (i: number, distinct = false) => ({
  tools: { allow: ['tool_*'], deny: [`tool_${String(i % 20).padStart(2, '0')}`] },
  roles: { viewer: { deny: ['tool_1*'] } },
  policies: { 'rate-limit': { limit: distinct ? 100 + i : 100, windowMs: 60000, per: 'user' }, approval: { tools: ['tool_19'] } },
});

export const tenantId = (i: number): string => `t${String(i).padStart(6, '0')}`;

export const token = (tenant: string): Promise<string> =>
  new SignJWT({ tenant, roles: [] }).setProtectedHeader({ alg: 'HS256' }).setSubject('bench').setIssuer('bench').setAudience('toolgate').setExpirationTime('1h').sign(new TextEncoder().encode(SECRET));

/** Writes the 20 function tools' module into `dir`; returns its path. */
export function writeToolsModule(dir: string): string {
  const tools = Array.from({ length: 20 }, (_, i) => `{ name: 'tool_${String(i).padStart(2, '0')}', description: 'bench tool ${i}', inputSchema: { type: 'object', properties: {} }, readOnly: true, handler: () => 'ok' }`);
  writeFileSync(join(dir, 'tools.mjs'), `export default [\n${tools.join(',\n')}\n];\n`);
  return join(dir, 'tools.mjs');
}
