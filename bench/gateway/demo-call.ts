// The JSON work both baselines do for a call (bench/gateway/bare-server.ts, composition-server.ts): the demo
// tools by name, and a ToolResult-like body for what a handler returned.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../../src/config/demo.js';

interface DemoTool {
  name: string;
  handler: (args: Record<string, unknown>) => unknown;
}

const tools = (await import(pathToFileURL(join(packageRoot(), 'examples/functions/demo-tools.mjs')).href)).default as DemoTool[];
// The guardrails comparison's 2 KiB result (BENCH_TOOL=result_2k), answered by the bare route too.
const result2k = (await import(pathToFileURL(join(packageRoot(), 'bench/gateway/result-2k.mjs')).href)).default as DemoTool[];
export const demoTools = new Map([...tools, ...result2k].map((tool) => [tool.name, tool]));

/** The response body of a successful call, as toolgate's ToolResult carries it. */
export function resultBody(callId: string, name: string, value: unknown, durationMs: number): string {
  return JSON.stringify({
    callId,
    name,
    ok: true,
    output: typeof value === 'string' ? value : JSON.stringify(value),
    source: 'function',
    durationMs,
    truncated: false,
    trace: null,
  });
}
