// Which tools must be called as MCP tasks (docs/mcp.md#tasks): with `mcpServer.tasks.approvalCalls:
// required`, the ones the caller's approval policy holds for a human; every other tool may be called either way.
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { auditRefusal } from '../../audit/call-audit.js';
import type { CallOrigin } from '../../audit/events.js';
import type { AuditSink } from '../../audit/types.js';
import { failureResult } from '../../call/tool-result.js';
import type { JsonObject, Tool } from '../../call/types.js';

export type ApprovalCalls = 'optional' | 'required';
export type TaskSupport = 'optional' | 'required';

/** Each tool's `execution.taskSupport` in tools/list; `needsApproval` judges a tool from config, nothing runs. */
export function taskSupportOf(approvalCalls: ApprovalCalls, needsApproval: (tool: Tool) => boolean): (tool: Tool) => TaskSupport {
  if (approvalCalls === 'optional') return () => 'optional';
  return (tool) => (needsApproval(tool) ? 'required' : 'optional');
}

/**
 * A tools/call without `task` of a tool listed `taskSupport: required`: the MCP spec (2025-11-25, tool-level
 * negotiation) has the server answer -32601 Method not found, as the SDK's own McpServer does. Audited as
 * the refused call it is (VALIDATION_ERROR, nothing ran, no approval requested).
 */
export function untaskedCallRefusal(audit: AuditSink, origin: CallOrigin, call: { tool: Tool; callId: string; arguments: JsonObject }): ProtocolError {
  const message = `tool ${call.tool.name} needs human approval and must be called as a task (taskSupport: required): send tools/call with task`;
  const result = failureResult('VALIDATION_ERROR', message, { callId: call.callId, name: call.tool.name, source: call.tool.source });
  auditRefusal(audit, { origin, result, tool: call.tool, args: call.arguments, time: Date.now(), durationMs: 0 });
  return new ProtocolError(ProtocolErrorCode.MethodNotFound, message);
}
