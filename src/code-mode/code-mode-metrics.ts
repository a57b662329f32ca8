import type { Counter, Registry } from 'prom-client';
import { METRICS, sharedCounter, type LabelsOf } from '../observability/metric-table.js';

/**
 * `toolgate_code_mode_calls_total{kind, source="code", outcome}`: each finished script (`kind="script"`,
 * outcome `ok` or why it stopped) and each call a script made (`kind="inner"`, the call's outcome). Inner
 * calls are also counted in `toolgate_tool_calls_total` as the ordinary calls they are.
 */
export function codeModeCounter(registry: Registry): Counter<LabelsOf<typeof METRICS.codeModeCalls>> {
  return sharedCounter(registry, METRICS.codeModeCalls);
}
