// toolgate's OAuth Client ID Metadata Document (docs/security-model.md#client-id-metadata-document): the
// registration the MCP authorization specification prefers after a pre-registered client. toolgate serves
// the document at a URL under `server.publicUrl`, and that URL is its client id at an authorization server
// that says it fetches such documents (`client_id_metadata_document_supported`). The client is public (PKCE,
// no secret): the document holds nothing secret, and no credential is sent for it.
/** The redirect URI of every user connection (the OAuth callback route). */
export const redirectUriOf = (publicUrl: string): string => `${publicUrl}/oauth/callback`;

export const CLIENT_METADATA_PATH = '/oauth/client-metadata.json';

/** The document's URL, which is also the client id it declares. */
export const clientMetadataUrlOf = (publicUrl: string): string => `${publicUrl}${CLIENT_METADATA_PATH}`;

export interface ClientMetadataDocument {
  client_id: string;
  client_name: string;
  client_uri: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: 'none';
}

/**
 * The document for a gateway reached at `publicUrl`. Only what a user's connection needs (authorization code
 * with its refresh): a public client cannot take client_credentials or token exchange, which keep their
 * configured or registered clients.
 */
export function clientMetadataDocument(publicUrl: string): ClientMetadataDocument {
  return {
    client_id: clientMetadataUrlOf(publicUrl),
    client_name: 'toolgate',
    client_uri: publicUrl,
    redirect_uris: [redirectUriOf(publicUrl)],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

/** Whether discovered authorization-server metadata says it accepts a URL as a client id (a boolean true, nothing else). */
export function acceptsClientMetadataDocument(metadata: Readonly<Record<string, unknown>>): boolean {
  return metadata.client_id_metadata_document_supported === true;
}
