import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';

let app: FastifyInstance | undefined;
let dir: string;
let acme: Record<string, string>;
let globex: Record<string, string>;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'toolgate-builtins-http-'));
  app = await buildTestApp(testConfig({ builtins: { workspaceRoot: dir }, tenants: { acme: { builtins: 'all' }, globex: {} } }));
  acme = bearer(await signToken({ tenant: 'acme' }));
  globex = bearer(await signToken({ tenant: 'globex' }));
});
afterAll(async () => {
  await app?.close();
  await rm(dir, { recursive: true, force: true });
});

const execute = (headers: Record<string, string>, name: string, args: Record<string, unknown>) =>
  app!.inject({ method: 'POST', url: '/v1/execute', headers, payload: { name, arguments: args, callId: 'c1' } });

describe('built-in tools over POST /v1/execute', () => {
  it('lets a tenant with built-ins enabled write, read and run commands in its workspace', async () => {
    const written = await execute(acme, 'write_file', { path: 'notes/hello.txt', content: 'hello\nworld\n' });
    expect(written.json()).toMatchObject({ ok: true, source: 'builtin' });
    const read = await execute(acme, 'read_file', { path: 'notes/hello.txt', startLine: 2 });
    expect(read.statusCode).toBe(200);
    expect(JSON.parse(read.json().output)).toMatchObject({ path: 'notes/hello.txt', content: 'world', startLine: 2 });
    const ran = await execute(acme, 'bash', { action: 'exec', command: 'cat notes/hello.txt | wc -l' });
    expect(ran.json().ok).toBe(true);
    expect(JSON.parse(ran.json().output)).toEqual({ stdout: '2\n', stderr: '', exitCode: 0, timedOut: false });
  });

  it('answers PERMISSION_DENIED for traversal through HTTP too', async () => {
    const res = await execute(acme, 'read_file', { path: '../../etc/passwd' });
    expect(res.json().error.errorType).toBe('PERMISSION_DENIED');
  });

  it('applies the sanitizer rule for unknown bash actions', async () => {
    const res = await execute(acme, 'bash', { action: 'rm' });
    expect(res.json().error).toEqual({ errorType: 'VALIDATION_ERROR', error: 'unsupported bash action: rm' });
  });

  it('refuses built-ins to a tenant that did not enable them (as unknown names) and hides them from its listing', async () => {
    for (const [name, args] of [['read_file', { path: 'x' }], ['bash', { command: 'id' }]] as const) {
      const res = await execute(globex, name, args);
      expect(res.statusCode).toBe(200);
      expect(res.json().error).toEqual({ errorType: 'UNKNOWN_TOOL', error: `unknown tool: ${name}` });
    }
    const listed = await app!.inject({ method: 'GET', url: '/v1/tools', headers: globex });
    expect(listed.json().tools.map((t: { name: string }) => t.name)).not.toContain('bash');
    const acmeListed = await app!.inject({ method: 'GET', url: '/v1/tools', headers: acme });
    expect(acmeListed.json().tools.slice(0, 8).map((t: { name: string }) => t.name)).toEqual(['apply_patch', 'bash', 'edit', 'glob', 'grep', 'read_file', 'update_agents_md', 'write_file']);
  });

  it('reaps background processes when the app closes', async () => {
    const started = await execute(acme, 'bash', { action: 'start', command: 'sleep 1000' });
    const { pid } = JSON.parse(started.json().output) as { pid: number };
    const state = () => {
      try {
        return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0];
      } catch {
        return 'gone';
      }
    };
    expect(state()).not.toBe('gone');
    await app!.close();
    app = undefined;
    expect(['gone', 'Z']).toContain(state());
  });
});
