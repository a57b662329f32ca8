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
  return {
    getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
      // A schema ajv cannot compile leaves the output unchecked, as an input schema that does not compile does.
      const check = validatorFor(withRunnablePatterns(schema as JsonObject));
      return (input) => {
        const result = check ? check(input as JsonObject) : { ok: true as const };
        return result.ok ? { valid: true, data: input as T, errorMessage: undefined } : { valid: false, data: undefined, errorMessage: result.message };
      };
    },
  };
}
