// MCP CallToolResult → toolgate `{output, trace}` (docs/architecture.md#mcp-upstreams: text joined, the rest summarised, kept whole in trace).
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/client';
import { withMcpContent } from '../../call/mcp-content.js';
import { ToolError } from '../../call/tool-error.js';

/** Bytes a base64 payload decodes to, without decoding it. */
function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function summarise(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type} ${block.mimeType} ${base64Bytes(block.data)} bytes]`;
    case 'resource': {
      const { resource } = block;
      if ('text' in resource && typeof resource.text === 'string') {
        return `[resource ${resource.uri}${resource.mimeType ? ` ${resource.mimeType}` : ''} ${resource.text.length} chars]`;
      }
      const blob = 'blob' in resource && typeof resource.blob === 'string' ? resource.blob : '';
      return `[resource ${resource.uri}${resource.mimeType ? ` ${resource.mimeType}` : ''} ${base64Bytes(blob)} bytes]`;
    }
    case 'resource_link':
      return `[resource_link ${block.uri}${block.name ? ` ${block.name}` : ''}]`;
    default:
      return `[${(block as { type: string }).type}]`;
  }
}

function isRichResult(result: CallToolResult): boolean {
  return result.structuredContent !== undefined || result.content.some((block) => block.type !== 'text');
}

/**
 * Maps an upstream result. `isError: true` throws ToolError('UPSTREAM_ERROR') carrying the upstream's
 * text; the whole result rides in `trace` (the model never sees it) whenever it holds more than text.
 * Blocks the single `output` string cannot carry as sent (several blocks, non-text, structured content)
 * also travel, unchanged, to toolgate's own MCP endpoint (src/call/mcp-content.ts).
 */
const isJsonObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export function toToolOutput(result: CallToolResult): { output: string; trace: unknown } {
  const content = Array.isArray(result.content) ? result.content : [];
  // Most calls answer one text block and nothing else: its text is the output, with nothing to summarise,
  // keep in the trace or carry beside it (the general path below copied the result to find that out).
  if (content.length === 1 && result.isError !== true && result.structuredContent === undefined) {
    const [only] = content;
    if (only?.type === 'text') return { output: only.text, trace: null };
  }
  const parts = content.map(summarise);
  if (result.isError === true) {
    const text = content.filter((block) => block.type === 'text').map((block) => (block as { text: string }).text).join('\n');
    throw new ToolError('UPSTREAM_ERROR', text || 'upstream tool reported an error', { trace: result });
  }
  // The spec asks servers to mirror structured content in a text block; when one does not, show the value.
  if (result.structuredContent !== undefined && parts.length === 0) parts.push(JSON.stringify(result.structuredContent));
  const normalised = { ...result, content };
  const rich = isRichResult(normalised);
  const mapped = { output: parts.join('\n'), trace: rich ? normalised : null };
  if (!rich && content.length <= 1) return mapped;
  const structured = result.structuredContent;
  // A structured value that is not an object (allowed since 2026-07-28) is carried by the output text only.
  const carried = isJsonObject(structured) ? { structuredContent: structured } : {};
  return withMcpContent(mapped, { content, ...carried });
}
