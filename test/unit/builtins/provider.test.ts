import { afterAll, describe, expect, it } from 'vitest';
import { BUILTIN_TOOL_NAMES, createBuiltinProvider } from '../../../src/builtins/index.js';
import { builtinsConfig } from './helpers.js';

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
