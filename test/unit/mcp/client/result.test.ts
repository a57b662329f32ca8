import { describe, expect, it } from 'vitest';
import { mcpContentOf } from '../../../../src/call/mcp-content.js';
import { ToolError } from '../../../../src/call/tool-error.js';
import { toToolOutput } from '../../../../src/mcp/client/result.js';

/** The REST-visible part of a mapped result (the MCP endpoint's copy of the blocks rides under a symbol). */
const restPart = (mapped: { output: string; trace: unknown }) => ({ output: mapped.output, trace: mapped.trace });

describe('toToolOutput', () => {
  it('joins text content with newlines and keeps no trace for plain text', () => {
    const mapped = toToolOutput({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] });
    expect(restPart(mapped)).toEqual({ output: 'a\nb', trace: null });
    // The MCP endpoint still sends the two blocks apart, as the upstream did.
    expect(mcpContentOf(mapped)).toEqual({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] });
  });

  it('carries nothing extra for a single text block (its output is that text)', () => {
    expect(mcpContentOf(toToolOutput({ content: [{ type: 'text', text: 'a' }] }))).toBeUndefined();
  });

  it('summarises an image in output and keeps it whole in trace', () => {
    const result = { content: [{ type: 'text' as const, text: 'here' }, { type: 'image' as const, mimeType: 'image/png', data: 'AAAA' }] };
    const mapped = toToolOutput(result);
    expect(mapped.output).toBe('here\n[image image/png 3 bytes]');
    expect(mapped.trace).toEqual(result);
    expect(mcpContentOf(mapped)).toEqual({ content: result.content });
    expect(JSON.stringify(mapped)).toBe(JSON.stringify({ output: mapped.output, trace: result }));
  });

  it('summarises audio, embedded resources and resource links', () => {
    const { output } = toToolOutput({
      content: [
        { type: 'audio', mimeType: 'audio/wav', data: 'AAA=' },
        { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'hello' } },
        { type: 'resource', resource: { uri: 'file:///b.bin', blob: 'AA==' } },
        { type: 'resource_link', uri: 'file:///c', name: 'c' },
      ],
    });
    expect(output.split('\n')).toEqual([
      '[audio audio/wav 2 bytes]',
      '[resource file:///a.txt text/plain 5 chars]',
      '[resource file:///b.bin 1 bytes]',
      '[resource_link file:///c c]',
    ]);
  });

  it('shows structured content when it is the only answer and traces it', () => {
    expect(restPart(toToolOutput({ content: [], structuredContent: { sum: 3 } }))).toEqual({
      output: '{"sum":3}',
      trace: { content: [], structuredContent: { sum: 3 } },
    });
    const mirrored = { content: [{ type: 'text' as const, text: '{"sum":3}' }], structuredContent: { sum: 3 } };
    expect(restPart(toToolOutput(mirrored))).toEqual({ output: '{"sum":3}', trace: mirrored });
    expect(mcpContentOf(toToolOutput(mirrored))).toEqual(mirrored);
  });

  it('throws UPSTREAM_ERROR with the upstream text when isError is set', () => {
    const call = () => toToolOutput({ isError: true, content: [{ type: 'text', text: 'disk full' }] });
    expect(call).toThrow(ToolError);
    expect(call).toThrow('disk full');
    try {
      call();
    } catch (error) {
      expect((error as ToolError).errorType).toBe('UPSTREAM_ERROR');
    }
  });
});
