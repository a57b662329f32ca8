// server/discover names every revision /mcp serves (docs/mcp.md#two-protocol-eras): the SDK v2 entry answers
// discover itself and lists only the modern revisions it serves (its `supportedVersions` drops every
// 2025-era entry, with no option to keep them), while the same endpoint also serves the legacy revisions
// through `initialize`. The entry's answer is kept whole (its envelope and header checks, capabilities,
// server info, cache fields) and the legacy revisions are appended to its `supportedVersions`, modern first,
// so a client that prefers the modern era still picks it.
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';

/** The legacy revisions the session path negotiates at `initialize` (the SDK's list, newest first). */
export const LEGACY_VERSIONS: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The body is one `server/discover` request. */
export const asksDiscover = (body: unknown): boolean => isObject(body) && body.method === 'server/discover';

/**
 * The entry's answer to a discover with the legacy revisions added to `supportedVersions`; any other answer
 * (an error, an event stream) unchanged.
 */
export async function withLegacyVersions(response: Response): Promise<Response> {
  if (response.status !== 200 || !(response.headers.get('content-type') ?? '').includes('application/json')) return response;
  const body: unknown = await response.json();
  if (!isObject(body) || !isObject(body.result) || !Array.isArray(body.result.supportedVersions)) return Response.json(body, { status: response.status, headers: headersWithoutLength(response.headers) });
  const listed: unknown[] = body.result.supportedVersions;
  const supportedVersions = [...listed, ...LEGACY_VERSIONS.filter((version) => !listed.includes(version))];
  return Response.json({ ...body, result: { ...body.result, supportedVersions } }, { status: response.status, headers: headersWithoutLength(response.headers) });
}

/** The entry's headers, but for the length of the body it wrote (the new body's is set anew). */
function headersWithoutLength(headers: Headers): Headers {
  const copy = new Headers(headers);
  copy.delete('content-length');
  return copy;
}
