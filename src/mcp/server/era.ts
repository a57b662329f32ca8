// Which era of /mcp a POST belongs to (docs/mcp.md#two-protocol-eras), decided as the SDK v2 entry decides it.
// The SDK's classification runs again inside the entry for every modern request, and its first step — two
// failing zod parses that ask whether the body is a posted response — was toolgate's largest modern-only cost
// in the profile (bench/results.md, issue 45): so the one case the SDK documents as never legacy is answered
// without it, and every other body is classified by the SDK itself.
import { classifyInboundRequest, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A single request or notification that carries the per-request envelope claim (the protocol-version key in
 * `params._meta`, whatever its value): `isLegacyRequest` documents such a request as modern or one of the
 * modern path's own rejections, never legacy. Excluded, so the SDK judges them: `initialize` (a claim that is
 * not a valid modern one leaves it legacy), and a body with a `result` or `error` member (a posted response is
 * legacy before its claim is looked at; the SDK's response schemas are strict today, so this guards a laxer one).
 */
function claimsModernEra(body: unknown): boolean {
  if (!isObject(body) || 'result' in body || 'error' in body || body.method === 'initialize') return false;
  const params = body.params;
  return isObject(params) && isObject(params._meta) && PROTOCOL_VERSION_META_KEY in params._meta;
}

/**
 * Whether a POST whose body Fastify has parsed is of the legacy era, as `isLegacyRequest(request, body)` says
 * (a body-less POST is legacy): decided by the body and the MCP-Protocol-Version header alone, through the
 * SDK's public building block, so no web Request is built just to ask.
 */
export function isLegacyPost(body: unknown, protocolVersionHeader: string | undefined): boolean {
  if (body === undefined) return true;
  if (claimsModernEra(body)) return false;
  const outcome = classifyInboundRequest({ httpMethod: 'POST', ...(protocolVersionHeader !== undefined ? { protocolVersionHeader } : {}), body });
  return outcome.kind === 'legacy';
}
