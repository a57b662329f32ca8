import type { ErrorType, ToolCall, ToolOutput, ToolResult, ToolSourceKind } from './types.js';
import { attachMcpContent, mcpContentOf } from './mcp-content.js';

/** The model-readable failure string: `TOOL_ERROR: ` + JSON with keys in this exact order, no stack. */
export function toolErrorString(errorType: ErrorType, error: string, tool: string, callId: string): string {
  return `TOOL_ERROR: ${JSON.stringify({ errorType, error, tool, callId })}`;
}

export function isToolOutput(value: unknown): value is ToolOutput {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  // Most handler results have no `output` key: answered without listing their keys (this runs on every success).
  if (!Object.hasOwn(value, 'output')) return false;
  const keys = Object.keys(value);
  return keys.includes('output') && keys.every((key) => key === 'output' || key === 'trace');
}

/** Output is always a string: strings pass through, everything else is JSON-serialised. */
export function stringifyOutput(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  const json = JSON.stringify(value);
  return json === undefined ? String(value) : json;
}

/** Cuts output past `maxChars`, marking how much was dropped. */
export function truncateOutput(output: string, maxChars: number): { output: string; truncated: boolean } {
  if (output.length <= maxChars) return { output, truncated: false };
  const dropped = output.length - maxChars;
  return { output: `${output.slice(0, maxChars)}…[truncated ${dropped} chars]`, truncated: true };
}

/** Turns whatever a handler returned into a successful ToolResult. */
export function successResult(call: ToolCall, returned: unknown): ToolResult {
  const handlerOutput = isToolOutput(returned) ? returned : undefined;
  const { output, trace } = handlerOutput ?? { output: returned, trace: null };
  const cut = truncateOutput(stringifyOutput(output), call.tool.maxResultChars);
  const result: ToolResult = {
    callId: call.callId,
    name: call.name,
    ok: true,
    output: cut.output,
    source: call.tool.source,
    durationMs: 0,
    truncated: cut.truncated,
    trace: trace ?? null,
  };
  // Set, not spread in: a spread of `{}` cost an object and a generic copy on every successful call.
  if (call.resolvedFrom) result.resolvedFrom = call.resolvedFrom;
  const content = handlerOutput && mcpContentOf(handlerOutput);
  if (content) attachMcpContent(result, content, call.tool.maxResultChars);
  return result;
}

export interface FailureDetails {
  callId: string;
  name: string;
  source?: ToolSourceKind | null;
  trace?: unknown;
  retryAfterMs?: number;
  resolvedFrom?: string;
  /** Set when the failure is the call's end after it ran for a while (a batch's per-call timeout). */
  durationMs?: number;
}

/** A failed ToolResult; usable before a tool is resolved (unknown tool, bad arguments). */
export function failureResult(errorType: ErrorType, message: string, details: FailureDetails): ToolResult {
  return {
    callId: details.callId,
    name: details.name,
    ok: false,
    output: toolErrorString(errorType, message, details.name, details.callId),
    source: details.source ?? null,
    durationMs: details.durationMs ?? 0,
    truncated: false,
    trace: details.trace ?? null,
    error: { errorType, error: message },
    ...(details.retryAfterMs !== undefined ? { retryAfterMs: details.retryAfterMs } : {}),
    ...(details.resolvedFrom ? { resolvedFrom: details.resolvedFrom } : {}),
  };
}

// Kept on a failed result under a symbol (spreads copy it, JSON never shows it): see ToolError.permanent.
const PERMANENT_FAILURE = Symbol('toolgate.permanentFailure');

/** Marks a failure as a definite answer that retrying cannot change and that says nothing about upstream health. */
export function markPermanent(result: ToolResult): ToolResult {
  (result as ToolResult & { [PERMANENT_FAILURE]?: true })[PERMANENT_FAILURE] = true;
  return result;
}

export function isPermanentFailure(result: ToolResult): boolean {
  return (result as ToolResult & { [PERMANENT_FAILURE]?: true })[PERMANENT_FAILURE] === true;
}

/** A call parked for a human's approval: not run yet, not failed (`status: pending_approval`). */
export function pendingApprovalResult(call: ToolCall, approvalId: string, output: string): ToolResult {
  const result: ToolResult = {
    callId: call.callId,
    name: call.name,
    ok: false,
    output,
    source: call.tool.source,
    durationMs: 0,
    truncated: false,
    trace: null,
    status: 'pending_approval',
    approvalId,
  };
  if (call.resolvedFrom) result.resolvedFrom = call.resolvedFrom;
  return result;
}

/** Shorthand for policies: a failure for a call already resolved to a tool. */
export function callFailure(call: ToolCall, errorType: ErrorType, message: string, extra: { trace?: unknown; retryAfterMs?: number } = {}): ToolResult {
  return failureResult(errorType, message, {
    callId: call.callId,
    name: call.name,
    source: call.tool.source,
    resolvedFrom: call.resolvedFrom,
    ...extra,
  });
}

