// `forwardIdentity` header templates (CONTRACT §11): the principal's identity, never its token.
import { ToolError } from '../execution/tool-error.js';
import type { Principal } from '../types.js';

const PLACEHOLDER = /\$\{(principal\.tenant|principal\.user|claims\.([A-Za-z0-9_.-]+))\}/g;

function claimValue(principal: Principal, name: string): string | undefined {
  const value = principal.claims[name];
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/**
 * Resolves every template against the verified principal. A claim the token lacks fails the call
 * closed (PERMISSION_DENIED), as bindings do: an upstream must never see a half-resolved identity.
 */
export function resolveIdentityHeaders(templates: Readonly<Record<string, string>>, principal: Principal): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [header, template] of Object.entries(templates)) {
    headers[header] = template.replace(PLACEHOLDER, (_match, path: string, claim: string | undefined) => {
      if (path === 'principal.tenant') return principal.tenant;
      if (path === 'principal.user') return principal.user;
      const value = claimValue(principal, claim ?? '');
      if (value === undefined) throw new ToolError('PERMISSION_DENIED', `identity header ${header} needs claim ${claim ?? ''}, which the token lacks`);
      return value;
    });
    // Header values cannot carry CR/LF; a claim holding one must not smuggle a second header.
    if (/[\r\n]/.test(headers[header] ?? '')) throw new ToolError('PERMISSION_DENIED', `identity header ${header} resolved to an invalid value`);
  }
  return headers;
}
