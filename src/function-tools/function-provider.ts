import type { Agent } from 'undici';
import { ConfigError } from '../config/interpolate.js';
import type { FunctionEntry } from '../config/types.js';
import type { ToolProvider } from '../registry/tool-provider.js';
import type { Tool } from '../call/types.js';
import { loadFunctionModule } from './function-module.js';
import { createHttpTool } from './http-tool.js';

/** Function tools: JS/TS modules and HTTP webhooks declared in config. */
export function createFunctionProvider(entries: readonly FunctionEntry[], agent: Agent): ToolProvider {
  let tools: Tool[] = [];
  return {
    kind: 'function',
    tools: () => tools,
    async start() {
      const loaded: Tool[] = [];
      for (const [index, entry] of entries.entries()) {
        if (!('module' in entry)) {
          loaded.push(createHttpTool(entry, agent));
          continue;
        }
        // A module that is missing, does not load or exports no tool spec is the configuration's error.
        const tools = await loadFunctionModule(entry.module).catch((error: unknown) => {
          throw new ConfigError(`config /functions/${index}/module: ${error instanceof Error ? error.message : String(error)}`);
        });
        loaded.push(...tools);
      }
      tools = loaded;
    },
  };
}
