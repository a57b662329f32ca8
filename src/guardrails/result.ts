// A ToolResult as guardrails see it (docs/governance.md#guardrails): its surfaces — the output (parsed when
// it is JSON and a rule selects fields), the error message, the trace, and an MCP upstream's content blocks
// and structuredContent — and the result rebuilt from their rewritten copies, or the refusal that replaces it.
import { mcpContentOf, replaceMcpContent, type McpContent } from '../call/mcp-content.js';
import { failureResult } from '../call/tool-result.js';
import type { ToolCall, ToolResult } from '../call/types.js';
import type { GuardrailLimits } from '../config/guardrails.js';
import type { Surface } from './scan.js';
import type { GuardrailEvent } from './types.js';

/** Binary fields of MCP blocks: base64, never text a model reads. */
const BINARY = new Set(['data', 'blob']);

export interface ResultSurfaces {
  readonly list: Surface[];
  /** The result the surfaces were read from (already cut when `onOversize: truncate` applied). */
  readonly result: ToolResult;
  readonly content: McpContent | undefined;
  readonly slots: { output: number; outputJson: boolean; error?: number; trace?: number; content?: number; structured?: number };
  /** `truncate` applied: the result was cut to the scan bound before it was scanned. */
  readonly events: readonly GuardrailEvent[];
}

function looksLikeJson(text: string): boolean {
  const first = text.trimStart()[0];
  return first === '{' || first === '[';
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Cuts a result to the scan bound: the output cut and marked, the trace and MCP content dropped (they were not scanned). */
function cutToBound(result: ToolResult, maxChars: number): ToolResult {
  // Room for the marker: what is cut, marker included, stays within the bound and is scanned.
  const keep = maxChars - 128;
  const dropped = result.output.length - keep;
  const cut: ToolResult = { ...result, output: dropped > 0 ? `${result.output.slice(0, keep)}…[truncated ${dropped} chars: past the guardrails scan limit]` : result.output, truncated: result.truncated || dropped > 0, trace: null };
  replaceMcpContent(cut, undefined);
  return cut;
}

function contentChars(result: ToolResult, content: McpContent | undefined): number {
  const traceChars = result.trace === null || result.trace === undefined ? 0 : (JSON.stringify(result.trace)?.length ?? 0);
  return result.output.length + traceChars + (content ? JSON.stringify(content).length : 0);
}

/** The result's output when it is the result's only surface (no error, trace or MCP content): a function tool's common answer. */
export function onlyOutput(result: ToolResult): string | undefined {
  return result.error === undefined && (result.trace === null || result.trace === undefined) && mcpContentOf(result) === undefined ? result.output : undefined;
}

export function resultSurfaces(original: ToolResult, limits: GuardrailLimits, wantsJson: boolean): ResultSurfaces {
  let result = original;
  const events: GuardrailEvent[] = [];
  if (limits.onOversize === 'truncate' && contentChars(original, mcpContentOf(original)) > limits.maxScanChars) {
    result = cutToBound(original, limits.maxScanChars);
    events.push({ direction: 'result', detector: 'oversize', action: 'truncate', count: 1 });
  }
  const content = mcpContentOf(result);
  const list: Surface[] = [];
  const parsed = wantsJson && looksLikeJson(result.output) ? parseJson(result.output) : undefined;
  const slots: ResultSurfaces['slots'] = { output: list.push(parsed !== undefined ? { value: parsed, selectable: true } : { value: result.output, selectable: false }) - 1, outputJson: parsed !== undefined };
  if (result.error) slots.error = list.push({ value: result.error.error, selectable: false }) - 1;
  if (result.trace !== null && result.trace !== undefined) slots.trace = list.push({ value: result.trace, selectable: false, skipKeys: BINARY }) - 1;
  if (content) {
    slots.content = list.push({ value: content.content, selectable: false, skipKeys: BINARY }) - 1;
    if (content.structuredContent !== undefined) slots.structured = list.push({ value: content.structuredContent, selectable: true }) - 1;
  }
  return { list, result, content, slots, events };
}

/** The result with its surfaces' rewritten copies (`values[i]` undefined: surface i unchanged). */
export function guardedResult(surfaces: ResultSurfaces, values: readonly unknown[]): ToolResult {
  const { result, slots, content } = surfaces;
  let changed = false;
  for (const value of values) if (value !== undefined) changed = true;
  if (!changed) return result;
  const output = values[slots.output];
  const guarded: ToolResult = { ...result };
  if (output !== undefined) guarded.output = slots.outputJson ? JSON.stringify(output) : (output as string);
  if (slots.error !== undefined && values[slots.error] !== undefined && result.error) guarded.error = { ...result.error, error: values[slots.error] as string };
  const structured = slots.structured === undefined ? undefined : (values[slots.structured] as Record<string, unknown> | undefined);
  let trace = slots.trace === undefined ? undefined : values[slots.trace];
  // An MCP result's trace holds its structuredContent too: fields masked by path are masked there as well.
  if (structured !== undefined && typeof result.trace === 'object' && result.trace !== null && 'structuredContent' in result.trace) {
    trace = { ...((trace ?? result.trace) as Record<string, unknown>), structuredContent: structured };
  }
  if (trace !== undefined) guarded.trace = trace;
  if (content && (structured !== undefined || (slots.content !== undefined && values[slots.content] !== undefined))) {
    const blocks = slots.content === undefined ? undefined : (values[slots.content] as readonly unknown[] | undefined);
    replaceMcpContent(guarded, { content: blocks ?? content.content, ...(content.structuredContent !== undefined ? { structuredContent: structured ?? content.structuredContent } : {}) });
  }
  return guarded;
}

/** Why a side was refused, in words that name kinds and bounds, never content. */
function why(kinds: readonly string[], side: 'arguments' | 'result'): string {
  const [subject, verb] = side === 'arguments' ? ['its arguments', 'contain'] : ['it', 'contains'];
  if (kinds.includes('oversize')) return `${subject} ${side === 'arguments' ? 'are' : 'is'} too large for the guardrails scan limit`;
  if (kinds.includes('timeout')) return `${subject} could not be scanned within the guardrails time limit`;
  if (kinds.includes('cancelled')) return `the scan of ${subject} was cancelled`;
  return `${subject} ${verb} ${kinds.join(', ')}`;
}

/** The refusal of a call whose arguments a `block` rule caught: names the kinds, never the content. */
export function refusedArguments(call: ToolCall, kinds: readonly string[]): ToolResult {
  return failureResult('GUARDRAIL_BLOCKED', `the call was refused by guardrails: ${why(kinds, 'arguments')}`, {
    callId: call.callId,
    name: call.name,
    source: call.tool.source,
    ...(call.resolvedFrom ? { resolvedFrom: call.resolvedFrom } : {}),
  });
}

/** The answer that replaces a result a `block` rule caught: names the kinds, never the content; no trace. */
export function withheldResult(call: ToolCall, result: ToolResult, kinds: readonly string[]): ToolResult {
  return failureResult('GUARDRAIL_BLOCKED', `the result was withheld by guardrails: ${why(kinds, 'result')}`, {
    callId: result.callId,
    name: result.name,
    source: result.source,
    ...(call.resolvedFrom ? { resolvedFrom: call.resolvedFrom } : {}),
  });
}
