import type { FastifyPluginAsync, FastifyTypeProvider, RawServerDefault } from 'fastify';
import type { Static, TSchema } from 'typebox';

/** The properties of an object schema that declare a `default`. */
type Defaulted<Schema> = Schema extends { readonly properties: infer Properties }
  ? { [Key in keyof Properties]: Properties[Key] extends { readonly default: unknown } ? Key : never }[keyof Properties]
  : never;

/**
 * What ajv hands a handler: TypeBox's type of the schema, with every property that has a `default`
 * present (the app's ajv runs with useDefaults, src/app.ts).
 */
export type Validated<Schema extends TSchema, Type = Static<Schema>> = Type extends object
  ? Omit<Type, Defaulted<Schema>> & { [Key in Defaulted<Schema> & keyof Type]-?: Exclude<Type[Key], undefined> }
  : Type;

/**
 * Route types from the route's own JSON Schemas (one source for schema and type): request parts as
 * validated, responses as TypeBox infers them, except that a `type: 'null'` response (204, 304) is sent
 * with no body at all (`reply.send()`).
 */
export interface RouteTypes extends FastifyTypeProvider {
  validator: this['schema'] extends TSchema ? Validated<this['schema']> : unknown;
  serializer: this['schema'] extends { readonly type: 'null' } ? undefined : this['schema'] extends TSchema ? Static<this['schema']> : unknown;
}

/** A route group typed by its schemas. */
export type RoutePlugin<Options extends object = Record<never, never>> = FastifyPluginAsync<Options, RawServerDefault, RouteTypes>;
