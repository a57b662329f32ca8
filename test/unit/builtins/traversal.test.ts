import { promises as fsp } from 'node:fs';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { readTextInside, writeTextInside } from '../../../src/builtins/file-io.js';
import { createWorkspaceFactory, encodeSegment } from '../../../src/builtins/workspace.js';
import { builtinsConfig, createSandbox, failure, principal, type Sandbox } from './helpers.js';

describe('path traversal is refused and nothing is written outside the workspace', () => {
  let sb: Sandbox;
  let root: string;

  beforeEach(async () => {
    sb = await createSandbox();
    await mkdir(sb.outside, { recursive: true });
    await writeFile(path.join(sb.outside, 'secret.txt'), 'TOP SECRET\n');
    await sb.run('write_file', { path: 'hello.txt', content: 'hi\n' });
    root = path.join(sb.workspaces, 'acme');
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await sb.cleanup();
  });

  const outsideEntries = () => readdir(sb.outside);

  it('refuses ../../etc/passwd, /etc/passwd and an absolute path outside', async () => {
    for (const p of ['../../etc/passwd', '/etc/passwd', path.join(sb.outside, 'secret.txt'), '../outside/secret.txt', 'a/../../outside/secret.txt']) {
      expect((await failure(sb.run('read_file', { path: p }))).errorType).toBe('PERMISSION_DENIED');
      expect((await failure(sb.run('write_file', { path: p.replace('secret', 'new'), content: 'x' }))).errorType).toBe('PERMISSION_DENIED');
    }
    expect(await outsideEntries()).toEqual(['secret.txt']);
  });

  it('treats percent-encoded dots literally and never decodes them', async () => {
    const read = await failure(sb.run('read_file', { path: '%2e%2e/%2e%2e/outside/secret.txt' }));
    expect(read.errorType).toBe('VALIDATION_ERROR');
    await sb.run('write_file', { path: '%2e%2e/evil.txt', content: 'x' });
    expect(await readFile(path.join(root, '%2e%2e', 'evil.txt'), 'utf8')).toBe('x');
    expect(await outsideEntries()).toEqual(['secret.txt']);
  });

  it('refuses paths containing a NUL byte', async () => {
    expect((await failure(sb.run('read_file', { path: 'hello.txt\0../../etc/passwd' }))).errorType).toBe('PERMISSION_DENIED');
    expect((await failure(sb.run('write_file', { path: 'x\0y', content: 'x' }))).errorType).toBe('PERMISSION_DENIED');
  });

  it('refuses reads and writes through a symlink to /', async () => {
    await symlink('/', path.join(root, 'rootlink'));
    expect((await failure(sb.run('read_file', { path: 'rootlink/etc/passwd' }))).errorType).toBe('PERMISSION_DENIED');
    expect((await failure(sb.run('write_file', { path: `rootlink${sb.outside}/new.txt`, content: 'x' }))).errorType).toBe('PERMISSION_DENIED');
    const globbed = (await sb.run('glob', { pattern: '**/passwd' })) as { matches: string[] };
    expect(globbed.matches).toEqual([]);
    const grepped = (await sb.run('grep', { pattern: 'root:' })) as { totalMatches: number };
    expect(grepped.totalMatches).toBe(0);
    expect(await outsideEntries()).toEqual(['secret.txt']);
  });

  it('refuses a dangling symlink whose target is outside, without creating the target', async () => {
    await symlink(path.join(sb.outside, 'created.txt'), path.join(root, 'dangle'));
    expect((await failure(sb.run('write_file', { path: 'dangle', content: 'x' }))).errorType).toBe('PERMISSION_DENIED');
    expect(await outsideEntries()).toEqual(['secret.txt']);
  });

  it('refuses to read a symlink that bash created pointing outside', async () => {
    const made = (await sb.run('bash', { action: 'exec', command: `ln -s ${JSON.stringify(path.join(sb.outside, 'secret.txt'))} leak && ln -s ../../outside leakdir && echo done` })) as { stdout: string };
    expect(made.stdout.trim()).toBe('done');
    expect((await failure(sb.run('read_file', { path: 'leak' }))).errorType).toBe('PERMISSION_DENIED');
    expect((await failure(sb.run('read_file', { path: 'leakdir/secret.txt' }))).errorType).toBe('PERMISSION_DENIED');
    expect((await failure(sb.run('edit', { path: 'leak', old_string: 'TOP', new_string: 'NOT' }))).errorType).toBe('PERMISSION_DENIED');
    expect(await readFile(path.join(sb.outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET\n');
  });

  it('refuses a patch that touches a path outside and applies none of its other changes', async () => {
    const patch = ['*** Begin Patch', '*** Add File: inside.txt', '+ok', '*** Add File: ../outside/evil.txt', '+evil', '*** End Patch'].join('\n');
    expect((await failure(sb.run('apply_patch', { patch }))).errorType).toBe('PERMISSION_DENIED');
    expect(await outsideEntries()).toEqual(['secret.txt']);
    expect(await readdir(root)).toEqual(['hello.txt']);
  });

  it('refuses writes into .git/hooks', async () => {
    expect((await failure(sb.run('write_file', { path: '.git/hooks/pre-commit', content: '#!/bin/sh' }))).errorType).toBe('PERMISSION_DENIED');
    expect((await failure(sb.run('write_file', { path: 'sub/.git/hooks/post-checkout', content: 'x' }))).errorType).toBe('PERMISSION_DENIED');
  });

  it('keeps a hostile tenant id inside the workspace root', async () => {
    const hostile = principal('../outside');
    await sb.run('write_file', { path: 'x.txt', content: 'x' }, hostile);
    expect(await outsideEntries()).toEqual(['secret.txt']);
    expect(await readFile(path.join(sb.workspaces, encodeSegment('../outside'), 'x.txt'), 'utf8')).toBe('x');
    expect(encodeSegment('../outside')).toMatch(/^_[0-9a-f]{32}$/);
    expect(encodeSegment('acme')).toBe('acme');
  });

  it('catches a folder swapped for an outside symlink between the check and the open (read)', async () => {
    await mkdir(path.join(sb.outside, 'd'));
    await writeFile(path.join(sb.outside, 'd', 'f.txt'), 'SWAPPED SECRET');
    await mkdir(path.join(root, 'd'));
    await writeFile(path.join(root, 'd', 'f.txt'), 'inside');
    const ws = await createWorkspaceFactory(builtinsConfig(sb.workspaces))(principal('acme'));
    const realOpen = fsp.open;
    vi.spyOn(fsp, 'open').mockImplementationOnce(async (...args: Parameters<typeof fsp.open>) => {
      await fsp.rename(path.join(root, 'd'), path.join(root, 'd-moved'));
      await symlink(path.join(sb.outside, 'd'), path.join(root, 'd'));
      return realOpen(...args);
    });
    expect((await failure(readTextInside(ws, 'd/f.txt'))).errorType).toBe('PERMISSION_DENIED');
  });

  it('catches a folder swapped for an outside symlink between the check and the open (write), removing what it created', async () => {
    await mkdir(path.join(sb.outside, 'd'));
    await mkdir(path.join(root, 'd'));
    const ws = await createWorkspaceFactory(builtinsConfig(sb.workspaces))(principal('acme'));
    const realOpen = fsp.open;
    vi.spyOn(fsp, 'open').mockImplementationOnce(async (...args: Parameters<typeof fsp.open>) => {
      await fsp.rename(path.join(root, 'd'), path.join(root, 'd-moved'));
      await symlink(path.join(sb.outside, 'd'), path.join(root, 'd'));
      return realOpen(...args);
    });
    expect((await failure(writeTextInside(ws, 'd/new.txt', 'x', 'overwrite'))).errorType).toBe('PERMISSION_DENIED');
    expect(await readdir(path.join(sb.outside, 'd'))).toEqual([]);
  });
});

describe('read-only roots', () => {
  it('can be read by absolute path but never written', async () => {
    const probe = await createSandbox();
    const shared = path.join(probe.dir, 'shared');
    await mkdir(shared);
    await writeFile(path.join(shared, 'doc.md'), 'shared doc\n');
    const local = await createSandbox({ readOnlyRoots: [shared] });
    try {
      const read = (await local.run('read_file', { path: path.join(shared, 'doc.md') })) as { content: string };
      expect(read.content).toBe('shared doc');
      expect((await failure(local.run('write_file', { path: path.join(shared, 'doc.md'), content: 'x' }))).errorType).toBe('PERMISSION_DENIED');
      expect((await failure(local.run('bash', { command: 'pwd', cwd: shared }))).errorType).toBe('PERMISSION_DENIED');
      expect(await readFile(path.join(shared, 'doc.md'), 'utf8')).toBe('shared doc\n');
    } finally {
      await local.cleanup();
      await probe.cleanup();
    }
  });
});

describe('file-tool errors reveal nothing about the host (issue 15 item 12)', () => {
  let sb: Sandbox;
  let root: string;
  beforeEach(async () => {
    sb = await createSandbox();
    await sb.run('glob', { pattern: '*' });
    root = path.join(sb.workspaces, 'acme');
    await mkdir(sb.outside, { recursive: true });
    await writeFile(path.join(sb.outside, 'exists.txt'), 'outside\n');
    await mkdir(path.join(sb.outside, 'dir'));
  });
  afterEach(() => sb.cleanup());

  it('answers a symlink to an outside file the same whether its target exists or not', async () => {
    const answers: Record<string, { errorType: string; message: string }> = {};
    for (const [link, target] of [['present', 'exists.txt'], ['absent', 'missing.txt'], ['presentDir', 'dir'], ['absentDir', 'nodir']] as const) {
      await symlink(path.join(sb.outside, target), path.join(root, link));
      const file = link.endsWith('Dir') ? `${link}/x.txt` : link;
      const answer = await failure(sb.run('read_file', { path: file }));
      answers[link] = { ...answer, message: answer.message.replace(file, '<path>') };
    }
    expect(answers.present).toEqual({ errorType: 'PERMISSION_DENIED', message: 'path resolves outside the workspace: <path>' });
    expect(answers.absent).toEqual(answers.present);
    expect(answers.presentDir).toEqual(answers.present);
    expect(answers.absentDir).toEqual(answers.present);
  });

  it('never names a host path in an error, whatever the file system answers', async () => {
    await symlink('loop', path.join(root, 'loop'));
    await writeFile(path.join(root, 'file.txt'), 'x\n');
    const long = 'n'.repeat(300);
    const calls: [string, Record<string, unknown>][] = [];
    for (const p of ['loop', 'loop/x.txt', `${long}.txt`, `${long}/x.txt`, 'file.txt/x', 'missing/x.txt', '.']) {
      calls.push(['read_file', { path: p }], ['write_file', { path: p, content: 'x' }], ['edit', { path: p, old_string: 'a', new_string: 'b' }]);
      calls.push(['glob', { pattern: '*', path: p }], ['grep', { pattern: 'x', path: p }], ['bash', { command: 'pwd', cwd: p }]);
      calls.push(['apply_patch', { patch: `*** Begin Patch\n*** Delete File: ${p}\n*** End Patch` }], ['apply_patch', { patch: `*** Begin Patch\n*** Add File: ${p}\n+x\n*** End Patch` }]);
    }
    const messages: string[] = [];
    for (const [name, args] of calls) {
      try {
        await sb.run(name, args);
      } catch (error) {
        messages.push(`${name} ${(error as { errorType?: string }).errorType}: ${(error as Error).message}`);
      }
    }
    expect(messages.length).toBeGreaterThan(40);
    expect(messages.filter((m) => m.includes(sb.dir) || m.includes('/proc/') || m.includes('TOOL_EXCEPTION') || m.includes('undefined'))).toEqual([]);
    expect(messages).toContain('read_file PERMISSION_DENIED: too many levels of symlinks: loop');
    expect(messages).toContain(`write_file VALIDATION_ERROR: path is too long: ${long}.txt`);
  });
});
