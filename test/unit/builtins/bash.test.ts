import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkBashStructure } from '../../../src/builtins/bash.js';
import { HeadTailBuffer, RingLog } from '../../../src/builtins/output-buffers.js';
import type { ProcessInfo } from '../../../src/builtins/background-processes.js';
import { createSandbox, failure, principal, type Sandbox } from './helpers.js';

interface Exec {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  timedOut: boolean;
  hint?: string;
}

// /proc/<pid>/stat: "pid (comm) state ppid pgrp …". A zombie (Z) is dead, just not yet reaped by its new parent.
function procStat(pid: number): { state: string; pgrp: number } | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    return { state: fields[0]!, pgrp: Number(fields[2]) };
  } catch {
    return undefined;
  }
}
const isAlive = (pid: number) => {
  const stat = procStat(pid);
  return stat !== undefined && stat.state !== 'Z';
};
const groupAlive = (pgid: number) =>
  readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .some((name) => {
      const stat = procStat(Number(name));
      return stat !== undefined && stat.pgrp === pgid && stat.state !== 'Z';
    });

async function waitFor(check: () => boolean | Promise<boolean>, attempts = 200): Promise<void> {
  for (let i = 0; i < attempts; i += 1) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('condition not reached');
}

let sb: Sandbox;
beforeEach(async () => {
  sb = await createSandbox({}, { commandTimeoutMs: 10_000, maxOutputBytes: 64 * 1024, maxProcesses: 2 });
});
afterEach(() => sb.cleanup());

describe('bash structure', () => {
  it('defaults to exec and follows the sanitizer rules', () => {
    expect(checkBashStructure({})).toBe('bash exec requires a non-empty command');
    expect(checkBashStructure({ command: 'ls' })).toBeUndefined();
    expect(checkBashStructure({ action: 'start', command: ' ' })).toBe('bash start requires a non-empty command');
    for (const action of ['status', 'logs', 'stop', 'write']) expect(checkBashStructure({ action })).toBe(`bash ${action} requires processId`);
    expect(checkBashStructure({ action: 'list' })).toBeUndefined();
    expect(checkBashStructure({ action: 'rm' })).toBe('unsupported bash action: rm');
  });

  it('classifies only status, logs and list as concurrency-safe', () => {
    const bash = sb.tool('bash');
    expect(['status', 'logs', 'list'].map((action) => bash.isConcurrencySafe({ action }))).toEqual([true, true, true]);
    expect([{}, { action: 'exec' }, { action: 'start' }, { action: 'write' }, { action: 'stop' }].map((a) => bash.isConcurrencySafe(a))).toEqual([false, false, false, false, false]);
    expect(bash.readOnly).toBe(false);
  });
});

describe('bash exec', () => {
  it('runs in the workspace with HOME there and a scrubbed environment', async () => {
    process.env.TOOLGATE_TEST_SECRET = 'hunter2';
    try {
      const out = (await sb.run('bash', { command: 'pwd; echo "$HOME"; env | cut -d= -f1 | sort | tr "\\n" " "; echo err >&2; exit 3' })) as Exec;
      const [cwd, home, names] = out.stdout.split('\n');
      const root = path.join(sb.workspaces, 'acme');
      expect(cwd).toBe(root);
      expect(home).toBe(root);
      // TOOLGATE_COMMAND_ID marks the command's processes for the leftover sweep; it carries no secret.
      expect(names!.trim().split(' ').filter((n) => !['PWD', 'SHLVL', '_', 'OLDPWD'].includes(n))).toEqual(['HOME', 'LANG', 'PATH', 'TERM', 'TOOLGATE_COMMAND_ID']);
      expect(out.stdout).not.toContain('hunter2');
      expect(out.stderr).toBe('err\n');
      expect(out.exitCode).toBe(3);
      expect(out.timedOut).toBe(false);
    } finally {
      delete process.env.TOOLGATE_TEST_SECRET;
    }
  });

  it('runs in a cwd inside the workspace and refuses one outside', async () => {
    await sb.run('write_file', { path: 'sub/x.txt', content: '' });
    expect(((await sb.run('bash', { command: 'ls', cwd: 'sub' })) as Exec).stdout).toBe('x.txt\n');
    expect((await failure(sb.run('bash', { command: 'ls', cwd: '..' }))).errorType).toBe('PERMISSION_DENIED');
  });

  it('kills a command that runs forever at its timeout, with its whole process group', async () => {
    const out = (await sb.run('bash', { command: 'sleep 1000 & echo $! > bg.pid; sleep 1000', timeoutMs: 300 })) as Exec;
    expect(out.timedOut).toBe(true);
    expect(out.exitCode).toBeNull();
    expect(out.hint).toContain('"start"');
    const bgPid = Number(((await sb.run('read_file', { path: 'bg.pid' })) as { content: string }).content);
    expect(isAlive(bgPid)).toBe(false);
  });

  it('caps a command printing 100 MB, keeping head and tail', async () => {
    const out = (await sb.run('bash', { command: 'echo START; head -c 100000000 /dev/zero | tr "\\0" a; echo; echo END' })) as Exec;
    expect(out.exitCode).toBe(0);
    expect(out.stdout.length).toBeLessThan(64 * 1024 + 100);
    expect(out.stdout.startsWith('START\naaa')).toBe(true);
    expect(out.stdout.endsWith('aaa\nEND\n')).toBe(true);
    expect(out.stdout).toMatch(/…\[\d+ bytes omitted\]…/);
  });

  it('kills the command when the call is aborted', async () => {
    const controller = new AbortController();
    const running = sb.run('bash', { command: 'echo $$ > self.pid; sleep 1000' }, principal('acme'), controller.signal);
    await waitFor(() => existsSync(path.join(sb.workspaces, 'acme', 'self.pid')));
    controller.abort();
    expect((await failure(running)).errorType).toBe('TIMEOUT');
  });
});

describe('bash background processes', () => {
  it('start, status, logs with offsets, write to stdin, stop and list', async () => {
    const started = (await sb.run('bash', { action: 'start', command: 'echo ready; while read line; do echo "got $line"; done' })) as ProcessInfo;
    expect(started.processId).toMatch(/^proc_[0-9a-f]{16}$/);
    expect(started.status).toBe('RUNNING');
    const id = started.processId;
    await sb.run('bash', { action: 'write', processId: id, input: 'hello\n' });
    const logs = async (offset: number, limit?: number) => (await sb.run('bash', { action: 'logs', processId: id, offset, limit })) as { content: string; nextOffset: number; truncated: boolean };
    await waitFor(async () => (await logs(0)).content.includes('got hello'));
    const first = await logs(0, 6);
    expect(first).toMatchObject({ content: 'ready\n', nextOffset: 6, truncated: false });
    expect((await logs(first.nextOffset)).content).toBe('got hello\n');
    const second = (await sb.run('bash', { action: 'start', command: 'sleep 1000' })) as ProcessInfo;
    const listed = (await sb.run('bash', { action: 'list' })) as { processes: ProcessInfo[] };
    expect(listed.processes.map((p) => p.processId)).toEqual([id, second.processId]);
    // maxProcesses = 2 per owner
    expect((await failure(sb.run('bash', { action: 'start', command: 'true' }))).errorType).toBe('PERMISSION_DENIED');
    const stopped = (await sb.run('bash', { action: 'stop', processId: second.processId })) as ProcessInfo;
    expect(stopped.status).toBe('KILLED');
    expect(isAlive(second.pid!)).toBe(false);
    expect(((await sb.run('bash', { action: 'status', processId: second.processId })) as ProcessInfo).status).toBe('KILLED');
  });

  it('escalates to SIGKILL when a process ignores SIGTERM', async () => {
    const started = (await sb.run('bash', { action: 'start', command: 'trap "" TERM; echo armed; while true; do sleep 0.05; done' })) as ProcessInfo;
    await waitFor(async () => ((await sb.run('bash', { action: 'logs', processId: started.processId })) as { content: string }).content.includes('armed'));
    const stopped = (await sb.run('bash', { action: 'stop', processId: started.processId })) as ProcessInfo;
    expect(stopped.signal).toBe('SIGKILL');
  });

  it('keeps a bounded log that reports dropped output', () => {
    const log = new RingLog(10);
    log.append('0123456789abcdef');
    expect(log.read(0, 100)).toEqual({ content: '6789abcdef', offset: 6, nextOffset: 16, truncated: true });
    expect(log.read(14, 100)).toEqual({ content: 'ef', offset: 14, nextOffset: 16, truncated: false });
    const buffer = new HeadTailBuffer(8);
    for (let i = 0; i < 1000; i += 1) buffer.push(Buffer.from('0123456789'));
    expect(buffer.toString()).toBe('0123\n…[9992 bytes omitted]…\n6789');
  });

  it('two tenants cannot see, read, write to or signal each other\'s processes or files', async () => {
    const acme = principal('acme');
    const globex = principal('globex');
    const mine = (await sb.run('bash', { action: 'start', command: 'sleep 1000' }, acme)) as ProcessInfo;
    await sb.run('write_file', { path: 'private.txt', content: 'acme only' }, acme);
    for (const action of ['status', 'logs', 'stop']) {
      expect(await failure(sb.run('bash', { action, processId: mine.processId }, globex))).toEqual({ errorType: 'VALIDATION_ERROR', message: `unknown processId: ${mine.processId}` });
    }
    expect((await failure(sb.run('bash', { action: 'write', processId: mine.processId, input: 'x' }, globex))).errorType).toBe('VALIDATION_ERROR');
    expect(await sb.run('bash', { action: 'list' }, globex)).toEqual({ processes: [] });
    // Same tenant, other user: processes are owned per (tenant, user).
    expect(await sb.run('bash', { action: 'list' }, principal('acme', 'bob'))).toEqual({ processes: [] });
    expect(isAlive(mine.pid!)).toBe(true);
    // Files: globex's workspace is a different folder, and acme's is outside it.
    const acmeFile = path.join(sb.workspaces, 'acme', 'private.txt');
    expect((await failure(sb.run('read_file', { path: 'private.txt' }, globex))).errorType).toBe('VALIDATION_ERROR');
    expect((await failure(sb.run('read_file', { path: acmeFile }, globex))).errorType).toBe('PERMISSION_DENIED');
    expect((await failure(sb.run('read_file', { path: '../acme/private.txt' }, globex))).errorType).toBe('PERMISSION_DENIED');
    expect((await failure(sb.run('write_file', { path: '../acme/private.txt', content: 'pwned' }, globex))).errorType).toBe('PERMISSION_DENIED');
    expect(((await sb.run('glob', { pattern: '**' }, globex)) as { matches: string[] }).matches).toEqual([]);
    expect(((await sb.run('read_file', { path: 'private.txt' }, acme)) as { content: string }).content).toBe('acme only');
  });

  it('leaves no background process alive after closeAll()', async () => {
    const a = (await sb.run('bash', { action: 'start', command: 'sleep 1000 & sleep 1000' })) as ProcessInfo;
    const b = (await sb.run('bash', { action: 'start', command: 'sleep 1000' }, principal('globex'))) as ProcessInfo;
    await sb.provider.closeAll();
    expect([isAlive(a.pid!), isAlive(b.pid!)]).toEqual([false, false]);
    // The whole group is gone, including the backgrounded child. SIGKILL has been sent to the group; under a
    // loaded machine the orphaned child may take a moment to be scheduled and die, hence a bounded poll.
    await expect.poll(() => groupAlive(a.pid!), { timeout: 3000, interval: 20 }).toBe(false);
    expect((await failure(sb.run('bash', { action: 'start', command: 'true' }))).errorType).toBe('TOOL_EXCEPTION');
    expect(await readdir(sb.workspaces)).toEqual(['acme', 'globex']);
  });
});
