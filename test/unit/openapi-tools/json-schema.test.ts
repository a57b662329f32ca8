import { describe, expect, it } from 'vitest';
import { createSchemaConverter } from '../../../src/openapi-tools/json-schema.js';

const convert = (schema: unknown) => createSchemaConverter().convert(schema);

describe('OpenAPI schema → JSON Schema', () => {
  it('turns 3.0 nullable into a union type (and adds null to an enum)', () => {
    expect(convert({ type: 'string', nullable: true, enum: ['a', 'b'] })).toEqual({ type: ['string', 'null'], enum: ['a', 'b', null] });
  });

  it('turns 3.0 boolean exclusive bounds into draft-07 numbers', () => {
    expect(convert({ type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 9, exclusiveMaximum: false })).toEqual({ type: 'number', exclusiveMinimum: 0, maximum: 9 });
  });

  it('drops OpenAPI-only and extension keywords and unknown formats', () => {
    expect(convert({ type: 'string', example: 'x', 'x-internal': true, xml: { name: 'a' }, discriminator: {}, format: 'weird' })).toEqual({ type: 'string' });
    expect(convert({ type: 'string', format: 'int64', pattern: '^[a-z]+$' })).toEqual({ type: 'string', format: 'int64', pattern: '^[a-z]+$' });
  });

  it('keeps patterns as written: they run on the linear-time engine, and defineTool takes out one it cannot run', () => {
    expect(convert({ type: 'string', pattern: '^(a+)+$' })).toEqual({ type: 'string', pattern: '^(a+)+$' });
    const patternProperties = { '^(x*)*y$': { type: 'string' }, '^(?=x)': { type: 'string' } };
    expect(convert({ type: 'object', patternProperties })).toEqual({ type: 'object', patternProperties });
  });

  it('leaves readOnly properties out of request schemas', () => {
    expect(convert({ type: 'object', required: ['id', 'name'], properties: { id: { type: 'integer', readOnly: true }, name: { type: 'string' } } })).toEqual({
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string' } },
    });
  });

  it('opens a $ref the parser left (recursive or external) instead of keeping a dangling pointer', () => {
    expect(convert({ type: 'object', properties: { child: { $ref: '#/components/schemas/Node' } } })).toEqual({ type: 'object', properties: { child: {} } });
  });

  it('adds the object type a standalone schema implies, and declares required names defined in a sibling branch', () => {
    expect(convert({ required: ['a'], properties: { a: { type: 'string' } } })).toEqual({ type: 'object', required: ['a'], properties: { a: { type: 'string' } } });
    expect(convert({ type: 'object', properties: { state: { type: 'string' } }, anyOf: [{ required: ['state'] }] })).toEqual({
      type: 'object',
      properties: { state: { type: 'string' } },
      anyOf: [{ required: ['state'], properties: { state: {} } }],
    });
  });

  it('keeps a property named __proto__ as data', () => {
    const out = convert({ type: 'object', properties: JSON.parse('{"__proto__": {"type": "string"}}') as object });
    expect(Object.getPrototypeOf(out.properties)).toBe(Object.prototype);
    expect(Object.keys(out.properties as object)).toEqual(['__proto__']);
  });

  it('converts a schema shared between operations once', () => {
    const converter = createSchemaConverter();
    const shared = { type: 'object', properties: { a: { type: 'string' } } };
    expect(converter.convert({ type: 'array', items: shared }).items).toBe(converter.convert(shared));
  });
});
