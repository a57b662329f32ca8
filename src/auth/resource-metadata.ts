import type { AuthConfig } from '../config/types.js';

export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

/** RFC 9728 §3.1: a resource's metadata URL, the well-known path inserted between its host and its path. */
export function resourceMetadataUrl(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  return `${url.origin}${RESOURCE_METADATA_PATH}${path}`;
}

export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers?: string[];
  scopes_supported?: string[];
  bearer_methods_supported: ['header'];
  resource_name: string;
}

/** toolgate as an OAuth protected resource (RFC 9728), or undefined while `auth.resource` is not configured. */
export function protectedResourceMetadata(auth: AuthConfig): ProtectedResourceMetadata | undefined {
  if (auth.resource === undefined) return undefined;
  const servers = auth.authorizationServers ?? [];
  const scopes = auth.scopesSupported ?? [];
  return {
    resource: auth.resource,
    ...(servers.length > 0 ? { authorization_servers: servers } : {}),
    ...(scopes.length > 0 ? { scopes_supported: scopes } : {}),
    // Tokens only in the Authorization header: never in a query string or a form body.
    bearer_methods_supported: ['header'],
    resource_name: 'toolgate',
  };
}
