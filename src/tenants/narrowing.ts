import { isDeepStrictEqual } from 'node:util';
import type { TenantConfig } from '../config/types.js';

/**
 * What a tenant's own `admin` may change in its tenant (`tenancy.tenantAdmins: narrow`,
 * docs/security-model.md#tenant-admins): only what narrows what the operator set. A glob list narrows when
 * each new allow glob lies within an old one, and each old deny glob within a new one (`within`: the same
 * glob, `*`, or a literal prefix and `*` that the other starts with); anything it cannot prove narrower is
 * refused. Returns the keys that would widen (or that a tenant admin may not touch at all), as config paths;
 * empty when the change only narrows.
 */
export function wideningKeys(before: TenantConfig, after: TenantConfig): string[] {
  const widened: string[] = [];
  const check = (path: string, narrows: boolean): void => {
    if (!narrows) widened.push(path);
  };
  check('tools/allow', covered(after.tools.allow, before.tools.allow));
  check('tools/deny', covered(before.tools.deny, after.tools.deny));
  check('mcpServices', subset(after.mcpServices, before.mcpServices));
  check('functions', covered(after.functions, before.functions));
  check('builtins', before.builtins === 'all' || (after.builtins !== 'all' && subset(after.builtins, before.builtins)));
  check('mode', before.mode !== 'readonly' || after.mode === 'readonly');
  for (const [role, rule] of Object.entries(before.roles)) {
    const next = Object.hasOwn(after.roles, role) ? after.roles[role] : undefined;
    check(`roles/${role}`, next !== undefined && covered(rule.deny ?? [], next.deny ?? []) && (rule.allow === undefined || (next.allow !== undefined && covered(next.allow, rule.allow))));
  }
  check('limits/maxInFlight', after.limits.maxInFlight <= before.limits.maxInFlight);
  check('userMcp/enabled', before.userMcp.enabled || !after.userMcp.enabled);
  for (const key of ['maxServers', 'maxToolsPerServer', 'maxDescriptionChars', 'maxSchemaBytes', 'maxCatalogBytes'] as const) {
    check(`userMcp/${key}`, after.userMcp[key] <= before.userMcp[key]);
  }
  check('resources', covered(after.resources.allow, before.resources.allow) && covered(before.resources.deny, after.resources.deny) && after.resources.maxReadChars <= before.resources.maxReadChars);
  check('prompts', covered(after.prompts.allow, before.prompts.allow) && covered(before.prompts.deny, after.prompts.deny) && after.prompts.maxResultChars <= before.prompts.maxResultChars);
  check('mcp/relay', (before.mcp.relay.elicitation || !after.mcp.relay.elicitation) && (before.mcp.relay.sampling || !after.mcp.relay.sampling));
  // Policies (rate limits, approvals), bindings (server-bound filters) and toolsets (sandbox limits) are the
  // operator's: any change to them is refused, whichever way it goes.
  for (const key of ['policies', 'bindings', 'toolsets', 'deferThreshold'] as const) check(key, isDeepStrictEqual(before[key], after[key]));
  return widened;
}

const subset = (small: readonly string[], large: readonly string[]): boolean => {
  const names = new Set(large);
  return small.every((item) => names.has(item));
};

/** Every name `inner` matches, `outer` matches too: the same glob, `*`, or a literal prefix + `*` that `inner` starts with. */
export function within(inner: string, outer: string): boolean {
  if (inner === outer || outer === '*') return true;
  return /^[A-Za-z0-9_-]*\*$/.test(outer) && inner.startsWith(outer.slice(0, -1));
}

/** Each glob of `inner` lies within some glob of `outer`. */
const covered = (inner: readonly string[], outer: readonly string[]): boolean => inner.every((glob) => outer.some((wider) => within(glob, wider)));
