import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLauncher } from '../../../src/builtins/sandbox.js';
import { bwrapProbe, createSandbox, failure, type Sandbox } from './helpers.js';

interface Exec {
  stdout: string;
  stderr: string;
  exitCode: number | null;
}

const usable = bwrapProbe.usable;
if (!usable) console.warn(`bwrap tests skipped: ${bwrapProbe.why}`);

describe.skipIf(!usable)('bash with sandbox: bwrap', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await createSandbox({ sandbox: 'bwrap' });
    await mkdir(sb.outside, { recursive: true });
    await writeFile(path.join(sb.outside, 'secret.txt'), 'TOP SECRET');
  });
  afterAll(() => sb.cleanup());

  it('sees and writes only the workspace', async () => {
    const out = (await sb.run('bash', { command: `echo hi > made.txt && cat made.txt && pwd; cat ${JSON.stringify(path.join(sb.outside, 'secret.txt'))} || echo cannot-read; ls /home /root 2>&1 | head -2` })) as Exec;
    expect(out.stdout).toContain('hi\n');
    expect(out.stdout).toContain(path.join(sb.workspaces, 'acme'));
    expect(out.stdout).toContain('cannot-read');
    expect(out.stdout).not.toContain('TOP SECRET');
    expect(((await sb.run('read_file', { path: 'made.txt' })) as { content: string }).content).toBe('hi');
  });

  it('cannot write system folders and has no network', async () => {
    const out = (await sb.run('bash', { command: 'touch /usr/x 2>/dev/null && echo wrote-usr; (exec 3<>/dev/tcp/1.1.1.1/53) 2>/dev/null && echo network || echo no-network' })) as Exec;
    expect(out.stdout).not.toContain('wrote-usr');
    expect(out.stdout).toContain('no-network');
  });

  it('cannot see host processes', async () => {
    const out = (await sb.run('bash', { command: `kill -0 ${process.pid} 2>/dev/null && echo visible || echo hidden` })) as Exec;
    expect(out.stdout.trim()).toBe('hidden');
  });

  it('cannot read the gateway\'s environment (/proc/<pid>/environ) or find a secret in it, under the default sandbox', async () => {
    const marker = `tg-marker-${Math.random().toString(36).slice(2)}`;
    process.env.TOOLGATE_TEST_MARKER_SECRET = marker;
    const byDefault = await createSandbox({ sandbox: undefined, allowUnsandboxedShell: false });
    try {
      const out = (await byDefault.run('bash', { command: `cat /proc/${process.pid}/environ; cat /proc/*/environ; grep -rals ${marker} /proc/[0-9]*/environ /proc/[0-9]*/cmdline; echo done` })) as Exec;
      expect(out.stdout).toContain('done');
      expect(out.stdout + out.stderr).not.toContain(marker);
      expect(byDefault.provider.status!()[0]).toMatchObject({ kind: 'sandbox:bwrap' });
    } finally {
      delete process.env.TOOLGATE_TEST_MARKER_SECRET;
      await byDefault.cleanup();
    }
  });

  it('runs grep inside the sandbox, the workspace bound read-only', async () => {
    await sb.run('write_file', { path: 'notes/a.txt', content: 'needle here\n' });
    expect(await sb.run('grep', { pattern: 'needle', path: 'notes' })).toEqual({ matches: [{ file: 'notes/a.txt', line: 1, content: 'needle here' }], filesSearched: 1, filesMatched: 1, totalMatches: 1, truncated: false });
    const spec = createLauncher('bwrap', { bwrapPath: '/usr/bin/bwrap' }).launch({ argv: ['/usr/bin/rg', 'x'], cwd: '/w/acme', workspace: { root: '/w/acme', readOnlyRoots: [] }, writable: false });
    expect(spec.args.join(' ')).toContain('--ro-bind /w/acme /w/acme');
    expect(spec.args.join(' ')).not.toContain('--bind /w/acme');
  });

  it('kills a sandboxed command at its timeout', async () => {
    const out = (await sb.run('bash', { command: 'sleep 1000', timeoutMs: 300 })) as { timedOut: boolean };
    expect(out.timedOut).toBe(true);
  });
});

describe('bash with sandbox: bwrap but no binary', () => {
  it('fails closed instead of running unsandboxed', async () => {
    const sb = await createSandbox({ sandbox: 'bwrap' }, {}, { launcher: createLauncher('bwrap', { searchPath: '/nonexistent' }) });
    try {
      const err = await failure(sb.run('bash', { command: 'echo ran > ran.txt' }));
      expect(err).toEqual({ errorType: 'TOOL_EXCEPTION', message: expect.stringContaining('bwrap') });
      expect((await failure(sb.run('read_file', { path: 'ran.txt' }))).errorType).toBe('VALIDATION_ERROR');
      expect(sb.provider.status!()[0]).toMatchObject({ state: 'down' });
      expect(await failure(sb.run('grep', { pattern: 'x' }))).toEqual({ errorType: 'TOOL_EXCEPTION', message: expect.stringContaining('bwrap') });
    } finally {
      await sb.cleanup();
    }
  });

  it('answers grep with bwrap\'s complaint when bwrap is installed but cannot create namespaces, never "no match"', async () => {
    const sb = await createSandbox({ sandbox: 'bwrap' });
    const fake = path.join(sb.dir, 'bwrap');
    await writeFile(fake, '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n', { mode: 0o755 });
    const broken = await createSandbox({ sandbox: 'bwrap' }, {}, { launcher: createLauncher('bwrap', { bwrapPath: fake }) });
    try {
      await broken.run('write_file', { path: 'a.txt', content: 'needle\n' });
      expect(await failure(broken.run('grep', { pattern: 'needle' }))).toEqual({ errorType: 'TOOL_EXCEPTION', message: expect.stringContaining('No permissions to create new namespace') });
    } finally {
      await broken.cleanup();
      await sb.cleanup();
    }
  });
});
