import { boundedName, errorTypeOf, outcomeOf } from '../audit/events.js';
import {
  ATTR_APPROVAL_ID,
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_OUTCOME,
  ATTR_SOURCE,
  ATTR_TENANT,
  inSpan,
  type SpanLinkTarget,
  type TraceContext,
} from '../observability/tracing.js';
import type { ToolResult } from '../call/types.js';

/**
 * One call as an `execute_tool {tool}` span (OpenTelemetry GenAI conventions) under the request's span,
 * current while the call runs so policy and upstream spans nest under it. It names the tool, the call id,
 * the tenant, the source and the outcome, never argument values, bound values or the caller's token.
 * `approval`: the call is the approved run of that approval; its span carries the approval id and links to
 * the span of the call that asked for it (in the requester's trace).
 */
export function tracedCall(parent: TraceContext, name: unknown, tenant: string, run: () => Promise<ToolResult>, approval?: { id: string; link?: SpanLinkTarget }): Promise<ToolResult> {
  const sent = typeof name === 'string' ? boundedName(name) : '';
  const attributes = { [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool', [ATTR_GEN_AI_TOOL_NAME]: sent, [ATTR_TENANT]: tenant, ...(approval ? { [ATTR_APPROVAL_ID]: approval.id } : {}) };
  return inSpan(
    `execute_tool ${sent}`,
    { parent, attributes, ...(approval?.link ? { links: [{ context: approval.link }] } : {}) },
    (span) =>
      run().then((result) => {
        // The resolved name (an alias resolves to its tool) and the call id are known once the call ran.
        if (result.name !== sent) span.updateName(`execute_tool ${boundedName(result.name)}`);
        return result;
      }),
    (result) => {
      const errorType = errorTypeOf(result);
      return {
        attributes: {
          [ATTR_GEN_AI_TOOL_NAME]: boundedName(result.name),
          [ATTR_GEN_AI_TOOL_CALL_ID]: result.callId,
          [ATTR_OUTCOME]: outcomeOf(result),
          ...(result.source === undefined || result.source === null ? {} : { [ATTR_SOURCE]: result.source }),
          ...(errorType === null ? {} : { [ATTR_ERROR_TYPE]: errorType }),
          // A call parked for approval names it, so its span and the approved run's can be found together.
          ...(result.approvalId === undefined ? {} : { [ATTR_APPROVAL_ID]: result.approvalId }),
        },
        failed: errorType !== null,
      };
    },
  );
}
