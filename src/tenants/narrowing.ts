import { isDeepStrictEqual } from 'node:util';
import type { TenantConfig } from '../config/types.js';

/**
 * What a tenant's own `admin` may change in its tenant (`tenancy.tenantAdmins: narrow`,
 * docs/security-model.md#tenant-admins): only what narrows what the operator set. Lists are compared as
 * written (an allow glob may only be dropped, a deny glob only added), so a glob that happens to match
 * less is still refused: the check errs on the side of refusing. Returns the keys that would widen (or
 * that a tenant admin may not touch at all), as config paths; empty when the change only narrows.
 */
export function wideningKeys(before: TenantConfig, after: TenantConfig): string[] {
  const widened: string[] = [];
  const check = (path: string, narrows: boolean): void => {
    if (!narrows) widened.push(path);
  };
  check('tools/allow', subset(after.tools.allow, before.tools.allow));
  check('tools/deny', subset(before.tools.deny, after.tools.deny));
  check('mcpServices', subset(after.mcpServices, before.mcpServices));
  check('functions', subset(after.functions, before.functions));
  check('builtins', before.builtins === 'all' || (after.builtins !== 'all' && subset(after.builtins, before.builtins)));
  check('mode', before.mode !== 'readonly' || after.mode === 'readonly');
  for (const [role, rule] of Object.entries(before.roles)) {
    const next = Object.hasOwn(after.roles, role) ? after.roles[role] : undefined;
    check(`roles/${role}`, next !== undefined && subset(rule.deny ?? [], next.deny ?? []) && (rule.allow === undefined || (next.allow !== undefined && subset(next.allow, rule.allow))));
  }
  check('limits/maxInFlight', after.limits.maxInFlight <= before.limits.maxInFlight);
  check('userMcp/enabled', before.userMcp.enabled || !after.userMcp.enabled);
  for (const key of ['maxServers', 'maxToolsPerServer', 'maxDescriptionChars', 'maxSchemaBytes', 'maxCatalogBytes'] as const) {
    check(`userMcp/${key}`, after.userMcp[key] <= before.userMcp[key]);
  }
  check('resources', subset(after.resources.allow, before.resources.allow) && subset(before.resources.deny, after.resources.deny) && after.resources.maxReadChars <= before.resources.maxReadChars);
  check('prompts', subset(after.prompts.allow, before.prompts.allow) && subset(before.prompts.deny, after.prompts.deny) && after.prompts.maxResultChars <= before.prompts.maxResultChars);
  check('mcp/relay', (before.mcp.relay.elicitation || !after.mcp.relay.elicitation) && (before.mcp.relay.sampling || !after.mcp.relay.sampling));
  // Policies (rate limits, approvals), bindings (server-bound filters) and toolsets (sandbox limits) are the
  // operator's: any change to them is refused, whichever way it goes.
  for (const key of ['policies', 'bindings', 'toolsets', 'deferThreshold'] as const) check(key, isDeepStrictEqual(before[key], after[key]));
  return widened;
}

const subset = (small: readonly string[], large: readonly string[]): boolean => {
  const within = new Set(large);
  return small.every((item) => within.has(item));
};
