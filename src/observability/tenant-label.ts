import type { Registry } from 'prom-client';

/** The `tenant` label of every tenant past the bound. */
export const OTHER_TENANTS_LABEL = '__other__';
export const DEFAULT_MAX_TENANT_SERIES = 1000;

const byRegistry = new WeakMap<Registry, { readonly label: (tenant: string) => string; readonly max: number }>();

/**
 * The `tenant` label of the per-tenant metrics on `registry`, bounded (docs/operations.md#metrics): the first
 * `max` tenants this replica labels keep their id, every later one counts as `__other__`, so 100,000 tenants
 * never make 100,000 series. One function per registry, shared by every metric module on it; the first
 * caller (createMetrics) sets the bound.
 */
export function tenantLabels(registry: Registry, max = DEFAULT_MAX_TENANT_SERIES): (tenant: string) => string {
  let labels = byRegistry.get(registry);
  if (!labels) {
    const labelled = new Set<string>();
    const label = (tenant: string): string => {
      if (labelled.has(tenant)) return tenant;
      if (labelled.size >= max) return OTHER_TENANTS_LABEL;
      labelled.add(tenant);
      return tenant;
    };
    byRegistry.set(registry, (labels = { label, max }));
  }
  return labels.label;
}

/**
 * The configured tenants whose per-tenant series start at 0 on `registry` (docs/operations.md#metrics): all
 * of them when they all fit under the label bound, none when they do not. Past the bound, starting the file's
 * first tenants at 0 gave idle tenants the named series (15 cells each, ~10 MiB of heap at 1,000 tenants, kept
 * from start: bench/results.md, issue 46) and left the tenants that do call to `__other__`; there the series
 * start with a tenant's first call, refusal, decision or session instead. Reads at most bound + 1 ids.
 */
export function tenantsAtZero(registry: Registry, tenants: Iterable<string>): readonly string[] {
  const max = byRegistry.get(registry)?.max ?? DEFAULT_MAX_TENANT_SERIES;
  const fitting: string[] = [];
  for (const tenant of tenants) {
    if (fitting.length >= max) return [];
    fitting.push(tenant);
  }
  return fitting;
}
