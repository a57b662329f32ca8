// The SDK's client checks a tool's structuredContent against the outputSchema its server listed; by default
// with its own ajv, which would run the server's patterns on V8's backtracking engine. Every upstream MCP
// client gets this validator instead: the gateway's schema validator, patterns on the linear-time engine
// and those it refuses taken out first (docs/security-model.md#untrusted-patterns-and-schemas).
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/client';
import { createSchemaValidator } from '../../execution/schema-validator.js';
import { withRunnablePatterns } from '../../patterns/schema-patterns.js';
import type { JsonObject } from '../../call/types.js';

export function createOutputValidator(): jsonSchemaValidator {
  const validatorFor = createSchemaValidator();
  // The SDK asks again on every call given a listed definition (callTool's `toolDefinition`): one validator
  // per schema object, not a walk of the schema per call (nor, where a pattern was taken out, a new copy
  // that the compiled-schema cache would never find).
  const validators = new WeakMap<object, JsonSchemaValidator<unknown>>();
  return {
    getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
      let validator = validators.get(schema);
      if (validator === undefined) {
        // A schema ajv cannot compile leaves the output unchecked, as an input schema that does not compile does.
        const check = validatorFor(withRunnablePatterns(schema as JsonObject));
        validator = (input) => {
          const result = check ? check(input as JsonObject) : { ok: true as const };
          return result.ok ? { valid: true, data: input, errorMessage: undefined } : { valid: false, data: undefined, errorMessage: result.message };
        };
        validators.set(schema, validator);
      }
      return validator as JsonSchemaValidator<T>;
    },
  };
}
