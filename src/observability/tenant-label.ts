import type { Registry } from 'prom-client';

/** The `tenant` label of every tenant past the bound. */
export const OTHER_TENANTS_LABEL = '__other__';
export const DEFAULT_MAX_TENANT_SERIES = 1000;

const byRegistry = new WeakMap<Registry, (tenant: string) => string>();

/**
 * The `tenant` label of the per-tenant metrics on `registry`, bounded (docs/operations.md#metrics): the first
 * `max` tenants this replica labels keep their id, every later one counts as `__other__`, so 100,000 tenants
 * never make 100,000 series. One function per registry, shared by every metric module on it; the first
 * caller (createMetrics) sets the bound.
 */
export function tenantLabels(registry: Registry, max = DEFAULT_MAX_TENANT_SERIES): (tenant: string) => string {
  let label = byRegistry.get(registry);
  if (!label) {
    const labelled = new Set<string>();
    label = (tenant) => {
      if (labelled.has(tenant)) return tenant;
      if (labelled.size >= max) return OTHER_TENANTS_LABEL;
      labelled.add(tenant);
      return tenant;
    };
    byRegistry.set(registry, label);
  }
  return label;
}
