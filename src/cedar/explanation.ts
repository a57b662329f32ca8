// What a Cedar decision tells the operator (docs/governance.md#cedar-explained): kept beside the call's
// result, never in it, so the caller's answer is the same whichever rule refused it. The audit event of the
// call reads it (src/audit/events.ts).
import type { ToolResult } from '../call/types.js';

export interface CedarExplanation {
  readonly decision: 'allow' | 'deny';
  /** The determining policy ids. */
  readonly policies: readonly string[];
  /** Why Cedar could not decide, when it could not (refused, fail closed). */
  readonly error?: string;
}

const explanations = new WeakMap<ToolResult, CedarExplanation>();

export function explain(result: ToolResult, explanation: CedarExplanation): ToolResult {
  explanations.set(result, explanation);
  return result;
}

export function explanationOf(result: ToolResult): CedarExplanation | undefined {
  return explanations.get(result);
}
