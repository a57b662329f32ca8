// A tool schema from a user's own MCP server is hostile input: converting it for a listing, or re-validating a
// call against it, must cost work linear in its size (these pools are not cached: the cost is paid per request).
import { describe, expect, it } from 'vitest';
import { geminiParameters } from '../../../src/registry/gemini-schema.js';
import { withoutNullOptionals } from '../../../src/registry/strict-schema.js';
import type { JsonObject } from '../../../src/call/types.js';

const N = 60_000;
const elapsed = (run: () => unknown): number => {
  const started = performance.now();
  run();
  return performance.now() - started;
};
/** `count` properties, all required, plus as many required names that are not properties. */
const wideSchema = (count: number): JsonObject => {
  const properties: JsonObject = {};
  const required: string[] = [];
  for (let i = 0; i < count; i++) {
    properties[`p${i}`] = { type: 'string' };
    required.push(`r${i}`, `p${i}`);
  }
  return { type: 'object', properties, required };
};

describe('hostile tool schemas cost bounded work', () => {
  it('gemini: a type array of thousands of entries does not fan out (was minutes of event-loop time)', () => {
    const inner: JsonObject = { type: ['null', ...Array.from({ length: 20_000 }, (_, i) => (i % 2 ? 'string' : `t${i}`))] };
    for (let i = 0; i < 20_000; i++) inner[`k${i}`] = 1;
    let converted: ReturnType<typeof geminiParameters>;
    // Liveness bound, not a speed figure: the old code ran for over 2 minutes here.
    expect(elapsed(() => (converted = geminiParameters({ type: 'object', properties: { a: inner } })))).toBeLessThan(3000);
    expect(converted!.properties?.a).toMatchObject({ type: 'STRING', nullable: true });
  });

  it('gemini: a long required list over many properties is linear (was quadratic)', () => {
    let converted: ReturnType<typeof geminiParameters>;
    expect(elapsed(() => (converted = geminiParameters(wideSchema(N))))).toBeLessThan(3000);
    expect(converted!.required).toHaveLength(N);
  });

  it('dropping nulls: many null arguments against a long required list is linear (was quadratic)', () => {
    const args: JsonObject = {};
    for (let i = 0; i < N; i++) args[`p${i}`] = null;
    const schema = wideSchema(N);
    schema.required = (schema.required as string[]).filter((name) => name.startsWith('r'));
    let relaxed: JsonObject = args;
    expect(elapsed(() => (relaxed = withoutNullOptionals(schema, args)))).toBeLessThan(3000);
    expect(Object.keys(relaxed)).toEqual([]);
  });
});
