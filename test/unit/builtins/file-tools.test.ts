import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitPatch, stagePatch } from '../../../src/builtins/apply-patch.js';
import { createWorkspaceFactory } from '../../../src/builtins/workspace.js';
import { builtinsConfig, context, createSandbox, failure, principal, type Sandbox } from './helpers.js';

let sb: Sandbox;
let root: string;
beforeEach(async () => {
  sb = await createSandbox({}, { maxReadChars: 50 });
  await sb.run('glob', { pattern: '*' }); // creates the workspace
  root = path.join(sb.workspaces, 'acme');
});
afterEach(() => sb.cleanup());

const file = (name: string) => readFile(path.join(root, name), 'utf8');

describe('read_file', () => {
  it('returns 1-based inclusive line ranges and cuts at maxChars', async () => {
    await writeFile(path.join(root, 'a.txt'), 'one\ntwo\nthree\nfour\n');
    expect(await sb.run('read_file', { path: 'a.txt', startLine: 2, endLine: 3 })).toEqual({ path: 'a.txt', content: 'two\nthree', startLine: 2, endLine: 3, totalLines: 4, truncated: false });
    await writeFile(path.join(root, 'long.txt'), 'x'.repeat(200));
    const long = (await sb.run('read_file', { path: 'long.txt', maxChars: 500 })) as { content: string; truncated: boolean };
    expect(long.content).toHaveLength(50); // config ceiling wins over the argument
    expect(long.truncated).toBe(true);
    expect((await failure(sb.run('read_file', { path: 'a.txt', startLine: 9 }))).errorType).toBe('VALIDATION_ERROR');
    expect((await failure(sb.run('read_file', { path: 'missing.txt' }))).message).toContain('no such file');
  });
});

describe('symlinks that stay inside the workspace', () => {
  it('are followed for reads and writes, relative or absolute, while glob reports them without entering', async () => {
    await mkdir(path.join(root, 'real', 'deep'), { recursive: true });
    await writeFile(path.join(root, 'real', 'deep', 'f.txt'), 'inside\n');
    await symlink('real/deep', path.join(root, 'rel'));
    await symlink(path.join(root, 'real'), path.join(root, 'abs'));
    await symlink('../real/deep/f.txt', path.join(root, 'real', 'up'));
    expect(await sb.run('read_file', { path: 'rel/f.txt' })).toMatchObject({ path: 'real/deep/f.txt', content: 'inside' });
    expect(await sb.run('read_file', { path: 'abs/deep/f.txt' })).toMatchObject({ path: 'real/deep/f.txt' });
    expect(await sb.run('read_file', { path: 'real/up' })).toMatchObject({ path: 'real/deep/f.txt' });
    expect(await sb.run('write_file', { path: 'rel/new/g.txt', content: 'g' })).toMatchObject({ path: 'real/deep/new/g.txt', created: true });
    expect(await file('real/deep/new/g.txt')).toBe('g');
    expect(await sb.run('glob', { pattern: '**' })).toMatchObject({ matches: ['abs', 'real/deep/f.txt', 'real/deep/new/g.txt', 'real/up', 'rel'] });
    await symlink('a', path.join(root, 'b'));
    await symlink('b', path.join(root, 'a'));
    expect(await failure(sb.run('read_file', { path: 'a' }))).toEqual({ errorType: 'PERMISSION_DENIED', message: 'too many levels of symlinks: a' });
  });
});

describe('write_file', () => {
  it('creates parents, overwrites, appends, and refuses create over an existing file', async () => {
    expect(await sb.run('write_file', { path: 'deep/dir/f.txt', content: 'a', mode: 'create' })).toEqual({ path: 'deep/dir/f.txt', mode: 'create', created: true, appended: false, bytesWritten: 1 });
    expect((await failure(sb.run('write_file', { path: 'deep/dir/f.txt', content: 'b', mode: 'create' }))).message).toContain('already exists');
    await sb.run('write_file', { path: 'deep/dir/f.txt', content: 'bc' });
    expect(await file('deep/dir/f.txt')).toBe('bc');
    expect(await sb.run('write_file', { path: 'deep/dir/f.txt', content: 'd', mode: 'append' })).toMatchObject({ created: false, appended: true });
    expect(await file('deep/dir/f.txt')).toBe('bcd');
    await sb.run('write_file', { path: 'deep/dir/f.txt', content: 'z' });
    expect(await file('deep/dir/f.txt')).toBe('z'); // shorter overwrite truncates
  });
});

describe('edit', () => {
  it('replaces a unique literal string and reports errors for missing, ambiguous, empty and identical strings', async () => {
    await writeFile(path.join(root, 'e.txt'), 'foo bar foo $1\n');
    expect((await failure(sb.run('edit', { path: 'e.txt', old_string: 'nope', new_string: 'x' }))).message).toContain('not found');
    expect((await failure(sb.run('edit', { path: 'e.txt', old_string: 'foo', new_string: 'x' }))).message).toContain('2 times');
    expect((await failure(sb.run('edit', { path: 'e.txt', old_string: '', new_string: 'x' }))).errorType).toBe('VALIDATION_ERROR');
    expect((await failure(sb.run('edit', { path: 'e.txt', old_string: 'bar', new_string: 'bar' }))).message).toContain('identical');
    expect(await sb.run('edit', { path: 'e.txt', old_string: 'bar', new_string: '$&' })).toEqual({ path: 'e.txt', replacements: 1 });
    expect(await file('e.txt')).toBe('foo $& foo $1\n'); // literal: no regex replacement patterns
    expect(await sb.run('edit', { path: 'e.txt', old_string: 'foo', new_string: 'q', replaceAll: true })).toEqual({ path: 'e.txt', replacements: 2 });
    expect(await file('e.txt')).toBe('q $& q $1\n');
  });

  it('matches a multi-line edit in a CRLF file and keeps CRLF', async () => {
    await writeFile(path.join(root, 'w.txt'), 'a\r\nb\r\nc\r\n');
    await sb.run('edit', { path: 'w.txt', old_string: 'a\nb', new_string: 'A\nB' });
    expect(await file('w.txt')).toBe('A\r\nB\r\nc\r\n');
  });
});

describe('update_agents_md', () => {
  it('reads a missing file as empty, then writes and appends AGENTS.md at the root', async () => {
    expect(await sb.run('update_agents_md', { action: 'read' })).toEqual({ path: 'AGENTS.md', exists: false, content: '' });
    await sb.run('update_agents_md', { action: 'write', content: '# Notes\n' });
    await sb.run('update_agents_md', { action: 'append', content: '- use pnpm\n' });
    expect(await sb.run('update_agents_md', { action: 'read' })).toEqual({ path: 'AGENTS.md', exists: true, content: '# Notes\n- use pnpm\n' });
    expect(sb.tool('update_agents_md').checkStructure!({ action: 'delete' })).toBe('unsupported update_agents_md action: delete');
  });
});

describe('apply_patch', () => {
  it('adds, updates and deletes files and reports line counts', async () => {
    await writeFile(path.join(root, 'keep.txt'), 'alpha\nbeta\ngamma\ndelta\n');
    await writeFile(path.join(root, 'gone.txt'), 'bye\n');
    const patch = [
      '*** Begin Patch',
      '*** Add File: src/new.ts',
      '+export const x = 1;',
      '*** Update File: keep.txt',
      '@@',
      ' alpha',
      '-beta',
      '+BETA',
      '+beta2',
      ' gamma',
      '*** Delete File: gone.txt',
      '*** End Patch',
    ].join('\n');
    expect(await sb.run('apply_patch', { patch })).toEqual({
      filesChanged: 3,
      fileChanges: [
        { path: 'src/new.ts', operation: 'add', linesAdded: 1, linesRemoved: 0 },
        { path: 'keep.txt', operation: 'update', linesAdded: 2, linesRemoved: 1 },
        { path: 'gone.txt', operation: 'delete', linesAdded: 0, linesRemoved: 1 },
      ],
    });
    expect(await file('src/new.ts')).toBe('export const x = 1;\n');
    expect(await file('keep.txt')).toBe('alpha\nBETA\nbeta2\ngamma\ndelta\n');
    await expect(file('gone.txt')).rejects.toThrow();
  });

  it('preserves CRLF line endings and a missing trailing newline', async () => {
    await writeFile(path.join(root, 'crlf.txt'), 'one\r\ntwo\r\nthree');
    await sb.run('apply_patch', { patch: '*** Begin Patch\n*** Update File: crlf.txt\n@@\n one\n-two\n+TWO\n three\n*** End of File\n*** End Patch' });
    expect(await file('crlf.txt')).toBe('one\r\nTWO\r\nthree');
  });

  it('changes nothing when a later hunk does not match (all or nothing)', async () => {
    await writeFile(path.join(root, 'a.txt'), 'a1\na2\n');
    await writeFile(path.join(root, 'b.txt'), 'b1\nb2\n');
    const patch = ['*** Begin Patch', '*** Update File: a.txt', '@@', '-a1', '+A1', '*** Add File: c.txt', '+c', '*** Update File: b.txt', '@@', '-not there', '+x', '*** End Patch'].join('\n');
    expect((await failure(sb.run('apply_patch', { patch }))).message).toContain('context not found');
    expect(await file('a.txt')).toBe('a1\na2\n');
    expect(await file('b.txt')).toBe('b1\nb2\n');
    await expect(file('c.txt')).rejects.toThrow();
  });

  it('rolls back applied changes when a write fails midway', async () => {
    await writeFile(path.join(root, 'a.txt'), 'a1\n');
    await writeFile(path.join(root, 'b.txt'), 'b1\n');
    const ws = await createWorkspaceFactory(builtinsConfig(sb.workspaces))(principal('acme'));
    const staged = await stagePatch(ws, ['*** Begin Patch', '*** Add File: n/new.txt', '+n', '*** Update File: a.txt', '@@', '-a1', '+A1', '*** Delete File: b.txt', '*** End Patch'].join('\n'));
    let writes = 0;
    const failing = {
      write: async (_: unknown, change: { path: string }, content: string) => {
        writes += 1;
        await mkdir(path.dirname(path.join(root, change.path)), { recursive: true });
        await writeFile(path.join(root, change.path), content);
        return [];
      },
      remove: async () => {
        throw new Error('disk on fire');
      },
    };
    await expect(commitPatch(ws, staged, failing)).rejects.toThrow('disk on fire');
    expect(writes).toBe(2);
    expect(await file('a.txt')).toBe('a1\n');
    expect(await file('b.txt')).toBe('b1\n');
    await expect(readFile(path.join(root, 'n', 'new.txt'))).rejects.toThrow();
  });

  it('rejects malformed envelopes with a line number', async () => {
    expect((await failure(sb.run('apply_patch', { patch: 'hello' }))).message).toContain('*** Begin Patch');
    expect((await failure(sb.run('apply_patch', { patch: '*** Begin Patch\n*** Add File: x\nnoplus\n*** End Patch' }))).message).toContain('line 3');
    expect(sb.tool('apply_patch').checkStructure!({ patch: '  ' })).toBe('apply_patch requires a non-empty patch');
  });
});

describe('glob and grep', () => {
  beforeEach(async () => {
    await mkdir(path.join(root, 'src', 'lib'), { recursive: true });
    await mkdir(path.join(root, 'node_modules', 'dep'), { recursive: true });
    await mkdir(path.join(root, '.git'), { recursive: true });
    await writeFile(path.join(root, 'src', 'b.ts'), 'const needle = 1;\n');
    await writeFile(path.join(root, 'src', 'lib', 'a.ts'), 'no\nNEEDLE here\nneedle again\n');
    await writeFile(path.join(root, 'src', 'notes.md'), 'needle in markdown\n');
    await writeFile(path.join(root, 'node_modules', 'dep', 'index.ts'), 'needle\n');
    await writeFile(path.join(root, '.git', 'config.ts'), 'needle\n');
    await writeFile(path.join(root, 'bin.dat'), Buffer.from([110, 101, 101, 100, 108, 101, 0, 1, 2]));
  });

  it('glob matches relative paths, sorted, skipping .git and node_modules, with maxResults', async () => {
    expect(await sb.run('glob', { pattern: '**/*.ts' })).toEqual({ matches: ['src/b.ts', 'src/lib/a.ts'], count: 2, truncated: false });
    expect(await sb.run('glob', { pattern: '*.ts', path: 'src' })).toEqual({ matches: ['src/b.ts'], count: 1, truncated: false });
    expect(await sb.run('glob', { pattern: '**', maxResults: 2 })).toMatchObject({ count: 2, truncated: true });
  });

  it('grep searches lines, honours include and caseInsensitive, skips binaries and caps results', async () => {
    const all = (await sb.run('grep', { pattern: 'needle' })) as Record<string, unknown>;
    expect(all).toEqual({
      matches: [
        { file: 'src/b.ts', line: 1, content: 'const needle = 1;' },
        { file: 'src/lib/a.ts', line: 3, content: 'needle again' },
        { file: 'src/notes.md', line: 1, content: 'needle in markdown' },
      ],
      filesSearched: 3,
      filesMatched: 3,
      totalMatches: 3,
      truncated: false,
    });
    const ci = (await sb.run('grep', { pattern: 'needle', include: '*.ts', caseInsensitive: true, maxResults: 2 })) as { matches: unknown[]; totalMatches: number; truncated: boolean };
    expect(ci.matches).toHaveLength(2);
    expect(ci.totalMatches).toBe(3);
    expect(ci.truncated).toBe(true);
  });

  it('glob skips folders deeper than the walk holds descriptors for and says the result is cut short; grep (rg) reaches them', async () => {
    const deep = path.join(root, 'deep', ...Array.from({ length: 70 }, (_, i) => `d${i}`));
    await mkdir(deep, { recursive: true });
    await writeFile(path.join(deep, 'bottom.ts'), 'needle\n');
    await writeFile(path.join(root, 'deep', 'top.ts'), 'needle\n');
    expect(await sb.run('glob', { pattern: '**/*.ts', path: 'deep' })).toEqual({ matches: ['deep/top.ts'], count: 1, truncated: true });
    const grepped = (await sb.run('grep', { pattern: 'needle', path: 'deep' })) as { matches: { file: string }[]; truncated: boolean };
    expect(grepped.matches.map((m) => m.file)).toEqual([`deep/${Array.from({ length: 70 }, (_, i) => `d${i}`).join('/')}/bottom.ts`, 'deep/top.ts']);
    expect(grepped.truncated).toBe(false);
  });

  it('grep runs patterns that backtrack exponentially elsewhere in linear time (ripgrep), with Rust regex syntax', async () => {
    // This test used to pin the old engine: a blacklist of nested quantifiers and a per-file V8 timeout.
    await writeFile(path.join(root, 'evil.txt'), `${'a'.repeat(40)}!\n`);
    expect(await sb.run('grep', { pattern: '^(a|a)*$', path: 'evil.txt' })).toEqual({ matches: [], filesSearched: 1, filesMatched: 0, totalMatches: 0, truncated: false });
    expect(await sb.run('grep', { pattern: '(a+)+!' })).toMatchObject({ matches: [{ file: 'evil.txt', line: 1 }], totalMatches: 1 });
    expect(await failure(sb.run('grep', { pattern: '([' }))).toMatchObject({ errorType: 'VALIDATION_ERROR', message: expect.stringContaining('invalid regular expression') });
    // Look-around is JavaScript syntax rg's linear engine does not have; PCRE2 is never enabled.
    const lookahead = await failure(sb.run('grep', { pattern: 'needle(?= )' }));
    expect(lookahead).toMatchObject({ errorType: 'VALIDATION_ERROR', message: expect.stringContaining('look-around') });
    expect(lookahead.message).not.toMatch(/pcre2/i);
    expect((await failure(sb.run('grep', { pattern: 'x', include: '{a' }))).message).toContain('invalid include glob');
  });

  it('grep searches one named file (binary and include rules still apply) and a subfolder, with workspace-relative paths', async () => {
    expect(await sb.run('grep', { pattern: 'needle', path: 'src/lib/a.ts' })).toEqual({ matches: [{ file: 'src/lib/a.ts', line: 3, content: 'needle again' }], filesSearched: 1, filesMatched: 1, totalMatches: 1, truncated: false });
    expect(await sb.run('grep', { pattern: 'needle', path: 'src/lib/a.ts', include: '*.md' })).toMatchObject({ filesSearched: 0, totalMatches: 0 });
    expect(await sb.run('grep', { pattern: 'needle', path: 'bin.dat' })).toMatchObject({ filesSearched: 0, totalMatches: 0 });
    const sub = (await sb.run('grep', { pattern: 'needle', path: 'src', include: 'lib/*.ts' })) as { matches: { file: string }[] };
    expect(sub.matches.map((m) => m.file)).toEqual(['src/lib/a.ts']);
    await writeFile(path.join(root, 'src', 'we*ird [name].txt'), 'needle\r\n' + 'x'.repeat(3000) + 'needle\n');
    const weird = (await sb.run('grep', { pattern: 'needle', path: 'src/we*ird [name].txt' })) as { matches: { file: string; content: string }[] };
    expect(weird.matches.map((m) => [m.file, m.content.length])).toEqual([['src/we*ird [name].txt', 6], ['src/we*ird [name].txt', 501]]);
  });

  it('grep answers TOOL_EXCEPTION naming ripgrep when rg is not installed', async () => {
    const bare = await createSandbox({}, {}, { rgPath: null });
    try {
      expect(await failure(bare.run('grep', { pattern: 'x' }))).toEqual({ errorType: 'TOOL_EXCEPTION', message: expect.stringContaining('ripgrep') });
    } finally {
      await bare.cleanup();
    }
  });
});
