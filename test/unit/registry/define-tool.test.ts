import { describe, expect, it } from 'vitest';
import { defineTool, isCallConcurrencySafe } from '../../../src/registry/define-tool.js';

describe('defineTool', () => {
  it('gives a tool defined with no flags the fail-closed defaults', () => {
    const tool = defineTool({ name: 'plain', handler: () => 'x' });
    expect(tool.isConcurrencySafe({})).toBe(false);
    expect(tool).toMatchObject({
      readOnly: false, destructive: false, idempotent: false, permission: 'defer', maxResultChars: 100000,
      aliases: [], deferLoading: false, searchHint: undefined, feature: undefined, source: 'function',
      inputSchema: { type: 'object', properties: {} },
    });
  });

  it('keeps read-only and destructive independent', () => {
    expect(defineTool({ name: 'a', handler: () => 1, destructive: true })).toMatchObject({ readOnly: false, destructive: true });
    expect(defineTool({ name: 'b', handler: () => 1, readOnly: true })).toMatchObject({ readOnly: true, destructive: false });
  });

  it('freezes the tool so no code path can mutate a shared definition', () => {
    const tool = defineTool({ name: 'frozen', handler: () => 1, aliases: ['f'] });
    expect(Object.isFrozen(tool)).toBe(true);
    expect(Object.isFrozen(tool.aliases)).toBe(true);
    expect(() => {
      (tool as { readOnly: boolean }).readOnly = true;
    }).toThrow();
  });

  it('treats a throwing concurrency classifier as unsafe', () => {
    const tool = defineTool({ name: 'c', handler: () => 1, isConcurrencySafe: () => { throw new Error('bad'); } });
    expect(isCallConcurrencySafe(tool, {})).toBe(false);
    const safe = defineTool({ name: 'd', handler: () => 1, isConcurrencySafe: (args) => args.mode === 'read' });
    expect(isCallConcurrencySafe(safe, { mode: 'read' })).toBe(true);
    expect(isCallConcurrencySafe(safe, { mode: 'write' })).toBe(false);
  });

  it('refuses a tool without a name or a handler', () => {
    expect(() => defineTool({ name: '', handler: () => 1 })).toThrow('name is required');
    expect(() => defineTool({ name: 'x' } as never)).toThrow('handler must be a function');
  });
});
