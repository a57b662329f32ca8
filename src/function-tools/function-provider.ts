import type { Agent } from 'undici';
import type { FunctionEntry } from '../config/types.js';
import type { ToolProvider } from '../registry/provider.js';
import type { Tool } from '../types.js';
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
      for (const entry of entries) {
        if ('module' in entry) loaded.push(...(await loadFunctionModule(entry.module)));
        else loaded.push(createHttpTool(entry, agent));
      }
      tools = loaded;
    },
  };
}
