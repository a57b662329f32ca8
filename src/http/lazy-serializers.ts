import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';

/**
 * Fastify's response serializers (fast-json-stringify, the compiler Fastify uses by default), each built on the
 * first response that needs it instead of for every route and status at start. Built at start they were ~4.5
 * MiB of code and closures made while the young generation was at its largest, copied twice by scavenges:
 * toward what grew Node 24's young generation to 128 MiB at 100,000 tenants (bench/results.md, ten30). Most
 * routes of a replica never answer most of their statuses. A schema Fastify cannot compile now fails that
 * response (500), not the start: test/unit/http/lazy-serializers.test.ts builds every route's serializers at start
 * (`eagerSerializers`), so one of the gateway's own that does not compile fails a test.
 */
export function lazySerializers(): SerializerFactory {
  const eager = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = eager(externalSchemas, options);
    return (route) => {
      // Fastify's description of the route, read when the first response comes: kept as it was given.
      const definition = { ...route };
      let serialize: ((doc: unknown) => string) | undefined;
      return (doc: unknown) => (serialize ??= compile(definition))(doc);
    };
  };
}
