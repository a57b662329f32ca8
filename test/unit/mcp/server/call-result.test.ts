import { describe, expect, it } from 'vitest';
import { mcpContentOf } from '../../../../src/call/mcp-content.js';
import { successResult } from '../../../../src/call/tool-result.js';
import { toCallToolResult } from '../../../../src/mcp/server/call-result.js';
import { toToolOutput } from '../../../../src/mcp/client/result.js';
import { defineTool } from '../../../../src/registry/define-tool.js';
import type { ToolCall } from '../../../../src/call/types.js';

const image = { type: 'image' as const, mimeType: 'image/png', data: 'iVBORw0KGgo=' };
const callOf = (maxResultChars: number): ToolCall => ({
  callId: 'c1',
  name: 'pic',
  arguments: {},
  tool: defineTool({ name: 'pic', source: 'global-mcp', maxResultChars, handler: () => '' }),
});

describe('toCallToolResult', () => {
  it("sends an MCP upstream's blocks and structuredContent as they came, the REST body unchanged", () => {
    const upstream = { content: [{ type: 'text' as const, text: 'look' }, image], structuredContent: { w: 1 } };
    const result = successResult(callOf(1000), toToolOutput(upstream));
    expect(toCallToolResult(result)).toEqual({ content: upstream.content, structuredContent: { w: 1 }, isError: false });
    expect(JSON.parse(JSON.stringify(result))).toMatchObject({ output: 'look\n[image image/png 8 bytes]', trace: upstream });
  });

  it("sends the cut output when the blocks are over the tool's maxResultChars", () => {
    const result = successResult(callOf(10), toToolOutput({ content: [{ type: 'text', text: 'x'.repeat(8) }, image] }));
    expect(mcpContentOf(result)).toBeUndefined();
    expect(toCallToolResult(result)).toEqual({ content: [{ type: 'text', text: result.output }], isError: false });
    expect(result.truncated).toBe(true);
  });

  it('sends a plain tool result as one text block', () => {
    expect(toCallToolResult(successResult(callOf(1000), { a: 1 }))).toEqual({ content: [{ type: 'text', text: '{"a":1}' }], isError: false });
  });
});
