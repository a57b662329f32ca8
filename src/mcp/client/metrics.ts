// Get-or-create for prom-client metrics: several MCP providers share one Registry, and a second
// `new Counter` with the same name would throw.
import { Counter, Gauge, type Registry } from 'prom-client';

export function counterIn(registry: Registry | undefined, name: string, help: string, labelNames: string[]): Counter {
  const existing = registry?.getSingleMetric(name);
  if (existing instanceof Counter) return existing;
  return new Counter({ name, help, labelNames, registers: registry ? [registry] : [] });
}

export function gaugeIn(registry: Registry | undefined, name: string, help: string, labelNames: string[]): Gauge {
  const existing = registry?.getSingleMetric(name);
  if (existing instanceof Gauge) return existing;
  return new Gauge({ name, help, labelNames, registers: registry ? [registry] : [] });
}
