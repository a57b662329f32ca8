import { describe, expect, it } from 'vitest';
import type { JsonSchemaType } from '@modelcontextprotocol/client';
import { createOutputValidator } from '../../../../src/mcp/client/output-validator.js';

// The SDK asks for a validator on every call that carries a listed tool definition (callTool's toolDefinition).
describe('the upstream output validator', () => {
  const schema = { type: 'object', properties: { word: { type: 'string', pattern: '^[a-z]+$' } }, required: ['word'] } as JsonSchemaType;
  // A lookahead the linear-time engine refuses: taken out of a copy of the schema, so the copy is new each time it is made.
  const refused = { type: 'object', properties: { code: { type: 'string', pattern: '^(?!x)[a-z]+$' } } } as JsonSchemaType;

  it('checks structured content against the schema, runnable patterns included', () => {
    const validate = createOutputValidator().getValidator<unknown>(schema);
    expect(validate({ word: 'abc' })).toMatchObject({ valid: true, data: { word: 'abc' } });
    expect(validate({ word: 'ABC' }).valid).toBe(false);
    expect(validate({}).valid).toBe(false);
  });

  it('leaves a refused pattern unchecked and the rest of the schema checked', () => {
    const validate = createOutputValidator().getValidator<unknown>(refused);
    expect(validate({ code: 'xyz' }).valid).toBe(true);
    expect(validate({ code: 7 }).valid).toBe(false);
  });

  it('hands back the same validator for the same schema object, also one whose pattern was taken out', () => {
    const validators = createOutputValidator();
    expect(validators.getValidator(schema)).toBe(validators.getValidator(schema));
    expect(validators.getValidator(refused)).toBe(validators.getValidator(refused));
    // A schema with the same content but another identity (a new listing) gets its own.
    expect(validators.getValidator({ ...schema })).not.toBe(validators.getValidator(schema));
  });
});
