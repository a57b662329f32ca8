// The Cedar schema generated for one tenant (docs/governance.md#cedar-entity-model): what a policy may read of
// the principal, the tool, a resource or prompt, and the request's context. Policies are validated against it
// at load, so an attribute that does not exist or a comparison of the wrong types fails the config.
import type { CedarConfig } from '../config/types.js';
import type { Tool } from '../call/types.js';
import type { CedarWasm } from './wasm.js';

type SchemaJson = CedarWasm.SchemaJson<string>;
type CedarType = CedarWasm.Type<string>;
type Attributes = Record<string, CedarType & { required?: boolean }>;

/** The Cedar type of an argument, as toolgate hands its value over (src/cedar/context.ts). */
export type ArgumentType = 'String' | 'Long' | 'Boolean' | 'Set<String>' | 'Set<Long>' | 'Set<Boolean>';

/** Argument names typed in one schema, at most: beyond them an argument is not visible to policies. */
const MAX_ARGUMENT_NAMES = 1_000;

const scalar = (type: unknown): 'String' | 'Long' | 'Boolean' | undefined =>
  type === 'string' ? 'String' : type === 'integer' || type === 'number' ? 'Long' : type === 'boolean' ? 'Boolean' : undefined;

/** The Cedar type of one JSON Schema property, when it has a single one Cedar can hold. */
export function argumentTypeOf(property: unknown): ArgumentType | undefined {
  if (property === null || typeof property !== 'object') return undefined;
  const { type, items } = property as { type?: unknown; items?: unknown };
  const plain = scalar(type);
  if (plain) return plain;
  if (type !== 'array' || items === null || typeof items !== 'object') return undefined;
  const element = scalar((items as { type?: unknown }).type);
  return element ? (`Set<${element}>` as ArgumentType) : undefined;
}

/**
 * Every argument name the tools take, typed where all tools that take it agree on one Cedar type. A name two
 * tools type differently, or one Cedar cannot hold (objects, fractions), is left out: a policy reading it
 * fails validation instead of comparing values of a type it did not expect.
 */
export function argumentTypes(tools: readonly Tool[]): ReadonlyMap<string, ArgumentType> {
  const types = new Map<string, ArgumentType | null>();
  for (const tool of tools) {
    const properties = (tool.inputSchema as { properties?: unknown }).properties;
    if (properties === null || typeof properties !== 'object') continue;
    for (const [name, property] of Object.entries(properties)) {
      const type = argumentTypeOf(property) ?? null;
      const known = types.get(name);
      if (known === undefined) {
        if (types.size < MAX_ARGUMENT_NAMES) types.set(name, type);
      } else if (known !== type) types.set(name, null);
    }
  }
  return new Map([...types].filter((entry): entry is [string, ArgumentType] => entry[1] !== null).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function cedarType(type: ArgumentType | CedarConfig['claims'][string]): CedarType {
  if (type.startsWith('Set<')) return { type: 'Set', element: { type: type.slice(4, -1) } } as CedarType;
  return { type } as CedarType;
}

const record = (attributes: Attributes): CedarType => ({ type: 'Record', attributes }) as CedarType;
const TIME: Attributes = {
  epochSeconds: { type: 'Long' },
  /** 0 (Sunday) … 6 (Saturday), UTC. */
  weekday: { type: 'Long' },
  hour: { type: 'Long' },
  minute: { type: 'Long' },
};

/**
 * The schema of one tenant: `User` (the principal), `Tool`, `Resource` and `Prompt`, and the actions `list`
 * and `call` on tools, `read` on resources, `get` on prompts. The claims are those the operator exposes
 * (`cedar.claims`), optional since a token may lack one; arguments are typed from the tools' input schemas.
 */
export function generateSchema(config: Pick<CedarConfig, 'claims'>, tools: readonly Tool[]): SchemaJson {
  const claims: Attributes = {};
  for (const [name, type] of Object.entries(config.claims ?? {})) claims[name] = { ...cedarType(type), required: false };
  const args: Attributes = {};
  for (const [name, type] of argumentTypes(tools)) args[name] = cedarType(type);
  const base: Attributes = { time: record(TIME), mode: { type: 'String' }, depth: { type: 'Long' } };
  const applies = (resource: string, context: Attributes) => ({ appliesTo: { principalTypes: ['User'], resourceTypes: [resource], context: record(context) } });
  return {
    '': {
      entityTypes: {
        User: { shape: record({ tenant: { type: 'String' }, roles: { type: 'Set', element: { type: 'String' } } as CedarType, claims: record(claims) }) },
        Tool: {
          shape: record({ name: { type: 'String' }, source: { type: 'String' }, service: { type: 'String' }, readOnly: { type: 'Boolean' }, destructive: { type: 'Boolean' } }),
        },
        Resource: { shape: record({ uri: { type: 'String' } }) },
        Prompt: { shape: record({ name: { type: 'String' } }) },
      },
      actions: {
        list: applies('Tool', { mode: { type: 'String' } }),
        call: applies('Tool', { ...base, arguments: record(args) }),
        read: applies('Resource', base),
        get: applies('Prompt', base),
      },
    },
  };
}
