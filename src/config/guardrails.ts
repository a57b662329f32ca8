// The guardrails configuration (docs/governance.md#guardrails): `tenants.<t>.guardrails` and the gateway
// default `guardrails`. One schema, its type derived from it; src/config/schema.ts uses it for both keys.
// Keys with a default are optional in the file (as the config's Section does): the compiler fills them.
import Type, { type Static } from 'typebox';

const Name = Type.String({ pattern: '^[a-z][a-z0-9_]{0,39}$' });

export const GuardrailRuleSchema = Type.Object(
  {
    /** Tool names or globs the rule applies to (the tool's canonical name). */
    tools: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { default: ['*'], maxItems: 100 })),
    /** `arguments` (before the executor), `result` (after it) or `both`. */
    on: Type.Optional(Type.Enum(['arguments', 'result', 'both'], { type: 'string', default: 'result' })),
    /** Detector groups (`secrets`, `pii`, `injection`), single kinds (`email`, `aws_access_key`…) or custom detectors. */
    detect: Type.Optional(Type.Array(Name, { minItems: 1, maxItems: 100 })),
    /** JSONPath selectors (the subset of docs/governance.md#selecting-fields) over structured content. */
    fields: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { minItems: 1, maxItems: 100 })),
    action: Type.Enum(['mask', 'hash', 'block', 'flag'], { type: 'string' }),
    /** Injection only: the score (0..1) at which the rule fires. */
    minScore: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.5 })),
  },
  { additionalProperties: false },
);

export const CustomDetectorSchema = Type.Object(
  {
    /** An RE2 pattern, run on the linear-time engine (src/patterns/). */
    pattern: Type.String({ minLength: 1, maxLength: 1000 }),
    /** Literals one of which every match contains: the pattern then runs only around them (much faster). */
    keywords: Type.Optional(Type.Array(Type.String({ minLength: 2, maxLength: 64 }), { minItems: 1, maxItems: 50 })),
    /** Longest match, in characters. */
    maxMatchChars: Type.Optional(Type.Integer({ minimum: 1, maximum: 4096, default: 256 })),
    caseInsensitive: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);

export const GuardrailLimitsSchema = Type.Object(
  {
    /** Characters scanned per call and direction (every text and string field together). */
    maxScanChars: Type.Optional(Type.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024, default: 1024 * 1024 })),
    /** The scanner's own time per call and direction (waiting for other work not counted). */
    maxScanMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 60_000, default: 1000 })),
    /** What happens to a result past either bound: refused, passed unscanned past the bound, or cut to it. */
    onOversize: Type.Optional(Type.Enum(['block', 'pass', 'truncate'], { type: 'string', default: 'block' })),
  },
  { additionalProperties: false },
);

export const GuardrailsObjectSchema = Type.Object(
  {
    rules: Type.Optional(Type.Array(GuardrailRuleSchema, { default: [], maxItems: 200 })),
    detectors: Type.Optional(Type.Unsafe<Record<string, CustomDetectorConfig>>({ type: 'object', additionalProperties: CustomDetectorSchema, propertyNames: { pattern: '^[a-z][a-z0-9_]{0,39}$' }, maxProperties: 50, default: {} })),
    limits: Type.Optional(GuardrailLimitsSchema),
    /** The key of the `hash` action (with the tenant id, so each tenant's hashes differ): use `${env:NAME}`. */
    hashKey: Type.Optional(Type.String({ minLength: 16 })),
  },
  { additionalProperties: false },
);

/** The rules alone (the short form) or the whole object; `false` switches a tenant's guardrails off. */
export const GuardrailsSchema = Type.Unsafe<GuardrailRule[] | GuardrailsObject | false>({
  oneOf: [Type.Array(GuardrailRuleSchema, { maxItems: 200 }), GuardrailsObjectSchema, { const: false }],
});

export type GuardrailRule = Static<typeof GuardrailRuleSchema>;
export type CustomDetectorConfig = Static<typeof CustomDetectorSchema>;
export type GuardrailLimits = Required<Static<typeof GuardrailLimitsSchema>>;
export type GuardrailsObject = Static<typeof GuardrailsObjectSchema>;
export type GuardrailsConfig = Static<typeof GuardrailsSchema>;
