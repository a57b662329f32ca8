import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { BUILTIN_TOOL_NAMES, createBuiltinProvider, UNSANDBOXED_SHELL_REFUSED, UNSANDBOXED_SHELL_WARNING } from '../../../src/builtins/index.js';
import { defaultSandboxMode, findExecutable } from '../../../src/builtins/sandbox.js';
import { demoConfig, packageRoot } from '../../../src/config/demo.js';
import { readFileSync } from 'node:fs';
import { builtinsConfig, createSandbox, failure } from './helpers.js';

describe('createBuiltinProvider', () => {
  const provider = createBuiltinProvider(builtinsConfig('/nonexistent-not-created-until-a-call'));
  afterAll(() => provider.closeAll());

  it('offers all eight built-ins as source builtin with closed schemas', () => {
    const tools = provider.tools();
    expect(provider.kind).toBe('builtin');
    expect(tools.map((t) => t.name).sort()).toEqual([...BUILTIN_TOOL_NAMES]);
    for (const tool of tools) {
      expect(tool.source).toBe('builtin');
      expect(tool.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
    }
  });

  it('marks read-only and concurrency classes per tool and per call', () => {
    const byName = Object.fromEntries(provider.tools().map((t) => [t.name, t]));
    const readOnly = provider.tools().filter((t) => t.readOnly).map((t) => t.name).sort();
    expect(readOnly).toEqual(['glob', 'grep', 'read_file']);
    for (const name of ['read_file', 'glob', 'grep']) expect(byName[name]!.isConcurrencySafe({})).toBe(true);
    for (const name of ['write_file', 'edit', 'apply_patch']) {
      expect(byName[name]!.isConcurrencySafe({})).toBe(false);
      expect(byName[name]!.destructive).toBe(true);
    }
    expect(byName.update_agents_md!.isConcurrencySafe({ action: 'read' })).toBe(true);
    expect(byName.update_agents_md!.isConcurrencySafe({ action: 'write' })).toBe(false);
    expect(byName.read_file!.checkStructure!({ path: '' })).toBe('read_file requires a non-empty path');
  });
});

describe('the sandbox a config gets, and the unsandboxed shell', () => {
  it('defaults to bwrap where the binary is on PATH, otherwise none', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'toolgate-path-'));
    try {
      expect(defaultSandboxMode(dir)).toBe('none');
      await writeFile(path.join(dir, 'bwrap'), '#!/bin/sh\n');
      await chmod(path.join(dir, 'bwrap'), 0o755);
      expect(defaultSandboxMode(dir)).toBe('bwrap');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!findExecutable('bwrap'))('runs the demo (no sandbox key) under bwrap on a machine that has it', async () => {
    const { config } = demoConfig({});
    expect(config.builtins.sandbox).toBeUndefined();
    const provider = createBuiltinProvider(config.builtins);
    expect(provider.status!()[0]).toMatchObject({ kind: 'sandbox:bwrap', state: 'ready' });
    await provider.closeAll();
  });

  it('refuses bash under sandbox: none unless allowUnsandboxedShell, and warns once when it is allowed', async () => {
    const refused = await createSandbox({ sandbox: 'none', allowUnsandboxedShell: false });
    try {
      for (const action of ['exec', 'start']) {
        expect(await failure(refused.run('bash', { action, command: 'echo ran > ran.txt' }))).toEqual({ errorType: 'TOOL_EXCEPTION', message: UNSANDBOXED_SHELL_REFUSED });
      }
      expect((await failure(refused.run('read_file', { path: 'ran.txt' }))).errorType).toBe('VALIDATION_ERROR');
      // The other built-ins (grep included) keep working.
      expect(await refused.run('grep', { pattern: 'x' })).toMatchObject({ totalMatches: 0 });
    } finally {
      await refused.cleanup();
    }
    const warn = vi.fn();
    const allowed = createBuiltinProvider(builtinsConfig('/nonexistent', { sandbox: 'none', allowUnsandboxedShell: true }), { log: { warn } });
    expect(warn.mock.calls).toEqual([[UNSANDBOXED_SHELL_WARNING]]);
    await allowed.closeAll();
    const quiet = vi.fn();
    await createBuiltinProvider(builtinsConfig('/nonexistent', { sandbox: 'bwrap', allowUnsandboxedShell: true }), { log: { warn: quiet } }).closeAll();
    expect(quiet).not.toHaveBeenCalled();
  });

  it('quotes the start-up warning word for word in docs/tools.md', () => {
    expect(readFileSync(path.join(packageRoot(), 'docs/tools.md'), 'utf8')).toContain(UNSANDBOXED_SHELL_WARNING);
  });
});
