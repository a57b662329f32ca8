import { describe, expect, it } from 'vitest';
import { declareTools, docComment } from '../../../src/code-mode/declarations.js';

const tool = (inputSchema: unknown, outputSchema?: unknown, description = 'd') => ({ name: 'probe-tool', description, inputSchema, outputSchema });

describe('declareTools', () => {
  it('declares arguments and, when given, the output type', () => {
    const text = declareTools([tool({ type: 'object', properties: { a: { type: 'integer' }, b: { type: ['string', 'null'] } }, required: ['a'], additionalProperties: false }, { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'], additionalProperties: false })]);
    expect(text).toContain('"probe-tool"(args: {\n    "a": number;\n    "b"?: (string | null);\n  }): Promise<{\n    "sum": number;\n  } | PendingApproval>;');
  });

  it('bounds hostile schemas: deep, wide and self-similar ones stay small', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 1000; i++) deep = { type: 'object', properties: { next: deep } };
    const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`p${i}`, { type: 'string', description: 'x'.repeat(5000) }])) };
    const hugeEnum = { enum: Array.from({ length: 100_000 }, (_, i) => `v${i}`) };
    for (const schema of [deep, wide, { type: 'object', properties: { e: hugeEnum } }]) {
      const text = declareTools([tool(schema)]);
      expect(text.length).toBeLessThan(20_000);
    }
  });

  it('bounds the whole answer: later tools are declared with unknown types', () => {
    const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`p${i}`, { type: 'string', description: 'x'.repeat(200) }])) };
    const text = declareTools(Array.from({ length: 20 }, (_, i) => ({ ...tool(wide), name: `t${i}` })));
    expect(text.length).toBeLessThan(100_000);
    expect(text).toContain('"t19"(args: unknown): Promise<unknown>;');
  });

  it('keeps a description inside its comment', () => {
    expect(docComment('a */ declare const x: 1; /*', '')).toBe('/** a *\u200b/ declare const x: 1; /* */\n');
    expect(docComment('', '')).toBe('');
  });
});
