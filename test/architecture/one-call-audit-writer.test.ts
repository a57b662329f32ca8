// Audit is the one outermost wrapper of every call (docs/architecture.md#audit): a call's audit event is
// written by src/audit/call-audit.ts alone — around the chain (the audit policy) and for the calls refused
// before it (the call path, the /mcp endpoint's params check, the task rule). This pins it, so no module
// starts to build or write a call event of its own.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/demo.js';

const root = packageRoot();
const THE_WRITER = 'src/audit/call-audit.ts';

async function sources(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(join(root, dir), { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.ts')) found.push(relative(root, join(entry.parentPath, entry.name)));
  }
  return found.sort();
}

/**
 * Whether a source builds or writes a call event: a `{ event: 'call' }` literal, or the builder `callEvent`
 * (exported for its unit test) used, or the writer's private `writeCall`.
 */
export function writesCallEvent(text: string): boolean {
  return /\bevent\s*:\s*['"`]call['"`]\s*[,}]/.test(text) || /\bcallEvent\s*\(/.test(text) || /\bwriteCall\s*\(/.test(text);
}

describe('the audit event of a call', () => {
  it('is recognised when a module builds one by hand or through the builder', () => {
    expect(writesCallEvent("sink.write({ event: 'call', time: 0 })")).toBe(true);
    expect(writesCallEvent('audit.write(callEvent(origin, result, facts))')).toBe(true);
    expect(writesCallEvent("if (event.event !== 'call') return;")).toBe(false);
    expect(writesCallEvent("export interface CallAuditEvent { event: 'call'; time: number }")).toBe(false);
    expect(writesCallEvent("auditRefusal(sink, { origin, result, time, durationMs: 0 })")).toBe(false);
  });

  it('is written by one module only, src/audit/call-audit.ts', async () => {
    const files = [...(await sources('src')), ...(await sources('routes')), ...(await sources('policies'))];
    const writers: string[] = [];
    for (const file of files) if (writesCallEvent(await readFile(join(root, file), 'utf8'))) writers.push(file);
    expect(writers).toEqual([THE_WRITER]);
  });

  it('is written around the chain and for refusals before it, both from that module', async () => {
    const policy = await readFile(join(root, 'policies/audit.ts'), 'utf8');
    expect(policy).toMatch(/from '\.\.\/src\/audit\/call-audit\.js'/);
    const path = await readFile(join(root, 'src/execution/execute.ts'), 'utf8');
    expect(path).toMatch(/auditRefusal\(/);
  });
});
