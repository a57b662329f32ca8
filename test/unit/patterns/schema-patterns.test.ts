import { describe, expect, it } from 'vitest';
import { createSchemaValidator } from '../../../src/execution/schema-validator.js';
import { withRunnablePatterns } from '../../../src/patterns/schema-patterns.js';
import { defineTool } from '../../../src/registry/define-tool.js';
import type { JsonObject } from '../../../src/call/types.js';

const handler = () => 'ok';

describe('tool schema patterns', () => {
  it('leaves a schema whose patterns all run as it is (the same object)', () => {
    const schema = { type: 'object', properties: { id: { type: 'string', pattern: '^(a+)+$' } }, patternProperties: { '^x-': { type: 'string' } } };
    expect(withRunnablePatterns(schema)).toBe(schema);
  });

  it('takes out patterns and patternProperties RE2 refuses, wherever they are, and notes why in $comment', () => {
    const schema: JsonObject = {
      type: 'object',
      properties: {
        pattern: { type: 'string', pattern: '^(?=a)a+$', $comment: 'upstream note' },
        list: { type: 'array', items: { type: 'string', pattern: '(a)\\1' } },
        either: { anyOf: [{ type: 'string', pattern: '^ok$' }, { type: 'string', pattern: '^(?!no)' }] },
      },
      patternProperties: { '^(?=x)': { type: 'string' }, '^y-': { type: 'string', pattern: '^(?<=a)b' } },
      definitions: { code: { type: 'string', pattern: '\\k<n>(?<n>a)' } },
    };
    const cleaned = withRunnablePatterns(schema) as { properties: Record<string, JsonObject>; patternProperties: Record<string, JsonObject>; definitions: Record<string, JsonObject> };
    expect(cleaned.properties.pattern).toEqual({ type: 'string', $comment: expect.stringMatching(/^upstream note\npattern "\^\(\?=a\)a\+\$" is not checked by the gateway: the linear-time regex engine \(RE2\) cannot run it/) });
    expect((cleaned.properties.list!.items as JsonObject).pattern).toBeUndefined();
    expect((cleaned.properties.either!.anyOf as JsonObject[])[0]).toEqual({ type: 'string', pattern: '^ok$' });
    expect((cleaned.properties.either!.anyOf as JsonObject[])[1]!.pattern).toBeUndefined();
    expect(Object.keys(cleaned.patternProperties)).toEqual(['^y-']);
    expect(cleaned.patternProperties['^y-']!.pattern).toBeUndefined();
    expect((cleaned as JsonObject).$comment).toMatch(/^patternProperties "\^\(\?=x\)" is not checked by the gateway/);
    expect(cleaned.definitions.code!.pattern).toBeUndefined();
    // The input is not changed (it may be an upstream's shared listing).
    expect((schema.properties as Record<string, JsonObject>).pattern!.pattern).toBe('^(?=a)a+$');
  });

  it('defineTool lists the schema it checks: the refused pattern is gone from both', () => {
    const tool = defineTool({ name: 't', handler, inputSchema: { type: 'object', properties: { a: { type: 'string', pattern: '^(?!x)' }, b: { type: 'string', pattern: '^[0-9]+$' } } } });
    expect((tool.inputSchema.properties as Record<string, JsonObject>).a!.pattern).toBeUndefined();
    const check = createSchemaValidator()(tool.inputSchema)!;
    expect(check({ a: 'xyz', b: '42' })).toEqual({ ok: true });
    expect(check({ b: '4x' })).toEqual({ ok: false, message: 'field "b" must match pattern "^[0-9]+$"' });
  });
});

describe('the schema validator runs every pattern on the linear-time engine', () => {
  const validatorFor = createSchemaValidator();

  it('checks ordinary patterns and patternProperties: accepts and rejects', () => {
    const check = validatorFor({ type: 'object', properties: { day: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' } }, patternProperties: { '^n_': { type: 'integer' } } })!;
    expect(check({ day: '2026-12-02', n_a: 1 })).toEqual({ ok: true });
    expect(check({ day: '2026-12-2' })).toEqual({ ok: false, message: 'field "day" must match pattern "^\\d{4}-\\d{2}-\\d{2}$"' });
    expect(check({ n_a: 'one' })).toEqual({ ok: false, message: 'field "n_a" must be integer' });
  });

  it('answers a backtracking pattern at once', () => {
    const check = validatorFor({ type: 'object', properties: { w: { type: 'string', pattern: '^(a+)+$' } } })!;
    const started = performance.now();
    expect(check({ w: `${'a'.repeat(40)}!` }).ok).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('refuses every call of a schema with a pattern it cannot run (one defineTool could not see), never runs it unchecked', () => {
    // A pattern reached only through a $ref into a keyword the schema walk does not know.
    const check = validatorFor({ type: 'object', properties: { a: { $ref: '#/x-hidden/p' } }, 'x-hidden': { p: { type: 'string', pattern: '^(?=a)' } } })!;
    expect(check({ a: 'anything' })).toEqual({ ok: false, message: expect.stringMatching(/^the schema's pattern "\^\(\?=a\)" cannot be used: .*cannot run it/) });
    expect(check({}).ok).toBe(false);
  });

  it('refuses a value too long to check against its pattern within the match budget', () => {
    const check = validatorFor({ type: 'object', properties: { text: { type: 'string', pattern: '^[a-z]+$' } } })!;
    expect(check({ text: 'a'.repeat(100) })).toEqual({ ok: true });
    expect(check({ text: 'a'.repeat(1_000_000) })).toEqual({ ok: false, message: expect.stringMatching(/^a value of 1000000 characters is too long to check against the pattern/) });
  });
});

describe('format checks', () => {
  it('format "regex" parses a value of at most 1000 characters and refuses a longer one without parsing it', () => {
    const check = createSchemaValidator()({ type: 'object', properties: { re: { type: 'string', format: 'regex' } } })!;
    expect(check({ re: '^[a-z]+(\\d{2})?$' })).toEqual({ ok: true });
    expect(check({ re: '([' }).ok).toBe(false);
    const started = performance.now();
    expect(check({ re: 'a.'.repeat(1_000_000) })).toEqual({ ok: false, message: 'field "re" must match format "regex"' });
    expect(performance.now() - started).toBeLessThan(1000); // generous: V8 took 2.2 s for half of it
  });
});
