import type { FastifyInstance } from 'fastify';
import { parse as parseYaml } from 'yaml';
import { errors } from '../errors.js';

/** The media type of YAML request bodies (RFC 9512). */
export const YAML_MEDIA_TYPE = 'application/yaml';

/**
 * Accepts `application/yaml` bodies on the routes of `app` (the tenant API: a tenant's configuration as it would
 * stand under `tenants.<id>` in the file). Parsed as the configuration file is (duplicate keys refused, at most
 * 100 aliases), then handed to the JSON body parser as JSON, so prototype poisoning is refused exactly as in a
 * JSON body; the route's schema then sees a plain JSON value.
 */
export function acceptYamlBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser(YAML_MEDIA_TYPE, { parseAs: 'string' }, (request, body, done) => {
    let value: unknown;
    try {
      value = parseYaml(body as string, { uniqueKeys: true, maxAliasCount: 100 });
    } catch (error) {
      return done(new errors.TG_BAD_REQUEST(`invalid YAML: ${(error as Error).message.split('\n')[0]}`), undefined);
    }
    parseJson(request, JSON.stringify(value ?? null), done);
  });
}
