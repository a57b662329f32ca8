import type { Registry } from 'prom-client';
import type { CodeModeSource } from '../snapshot/pool-cache.js';
import { codeModeCounter } from './code-mode-metrics.js';
import { codeModePool } from './pool.js';
import { createCodeModeTools } from './tools.js';

/** Code mode as the composition root hands it to the gateway (docs/code-mode.md): its tools, counted, and their pool. */
export function createCodeModeSource(registry: Registry): CodeModeSource {
  const counter = codeModeCounter(registry);
  return {
    tools: (toolset, host) =>
      createCodeModeTools(
        { ...host, count: (kind, outcome) => counter.inc({ kind, source: 'code', outcome }) },
        { ...toolset.sandbox, maxArgumentBytes: host.maxArgumentBytes },
      ),
    pool: codeModePool,
  };
}
