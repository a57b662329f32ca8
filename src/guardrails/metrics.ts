// The guardrails metric (docs/operations.md#metrics): findings by tenant (bounded like every per-tenant
// metric), detector kind, action and side. Kinds are a fixed set: built-in kinds, `field` for selector
// matches, `custom` for every operator-defined detector (their names are config, possibly a tenant's),
// `oversize` and `timeout` for content past the bounds.
import type { Registry } from 'prom-client';
import { counter, METRICS } from '../observability/metric-table.js';
import { tenantLabels } from '../observability/tenant-label.js';
import { BUILTIN_KINDS } from './detectors.js';
import type { GuardrailEvent } from './types.js';

export interface GuardrailMetrics {
  record(tenant: string, events: readonly GuardrailEvent[]): void;
}

const FIXED = new Set(['field', 'oversize', 'timeout', 'cancelled']);
const byRegistry = new WeakMap<Registry, GuardrailMetrics>();

export const detectorLabel = (kind: string): string => (BUILTIN_KINDS.has(kind) || FIXED.has(kind) ? kind : 'custom');

export function createGuardrailMetrics(registry: Registry): GuardrailMetrics {
  const known = byRegistry.get(registry);
  if (known) return known;
  const findings = counter(registry, METRICS.guardrailFindings);
  const tenantLabel = tenantLabels(registry);
  const metrics: GuardrailMetrics = {
    record(tenant, events) {
      for (const event of events) findings.inc({ tenant: tenantLabel(tenant), detector: detectorLabel(event.detector), action: event.action, direction: event.direction }, event.count);
    },
  };
  byRegistry.set(registry, metrics);
  return metrics;
}
