// `forwardIdentity` header templates (docs/security-model.md#upstream-identity): the principal's identity, never its token.
import { resolveBindings } from '../../bindings/templates.js';
import { ToolError } from '../../call/tool-error.js';
import type { Principal } from '../../call/principal.js';

/**
 * Resolves every template against the verified principal with the bindings resolver (same syntax,
 * same own-property claim lookup). A claim the token lacks fails the call closed (PERMISSION_DENIED),
 * as bindings do: an upstream must never see a half-resolved identity.
 */
export function resolveIdentityHeaders(templates: Readonly<Record<string, string>>, principal: Principal): Record<string, string> {
  const resolved = resolveBindings(templates, principal);
  if (!resolved.ok) throw new ToolError('PERMISSION_DENIED', `identity headers: ${resolved.reason}`);
  const headers: Record<string, string> = {};
  for (const [header, value] of Object.entries(resolved.value)) {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new ToolError('PERMISSION_DENIED', `identity header ${header} resolved to a non-scalar claim`);
    }
    const text = String(value);
    // Header values cannot carry CR/LF; a claim holding one must not smuggle a second header.
    if (/[\r\n]/.test(text)) throw new ToolError('PERMISSION_DENIED', `identity header ${header} resolved to an invalid value`);
    headers[header] = text;
  }
  return headers;
}
