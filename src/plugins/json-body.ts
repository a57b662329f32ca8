import fp from 'fastify-plugin';

/**
 * JSON bodies as Fastify parses them (prototype and constructor poisoning refused), except that an empty
 * body is no body: `curl -X DELETE -H 'content-type: application/json'` and many HTTP clients send the
 * header without one. A route that needs a body still refuses its absence through its schema.
 */
export const jsonBodyPlugin = fp(
  async (app) => {
    const parseJson = app.getDefaultJsonParser('error', 'error');
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      if (body === '') return done(null, undefined);
      return parseJson(request, body as string, done);
    });
  },
  { name: 'toolgate-json-body' },
);
