// Which upstream tools/call may go to the SDK's `request()` with an explicit result schema instead of through
// `Client.callTool()`, and that schema. callTool() adds three things around the same request: the check of
// structuredContent against the listed outputSchema, the mirroring of `x-mcp-header` arguments into headers on a
// modern connection, and, since it hands request() no schema, the SDK's probe for the method's result schema — a
// zod parse of `undefined` that fails and formats its issues on every call (bench/results.md, issue 44/45:
// about a third of the v2 client's CPU per call). A tool with neither an outputSchema nor a header declaration
// gains nothing from the first two, so it skips callTool and with it the probe.
import { specTypeSchemas, type CallToolResult, type StandardSchemaV1, type Tool as McpTool } from '@modelcontextprotocol/client';
import type { UpstreamEra } from './upstream-era.js';

/** The key SEP-2243 puts on an input schema's property to mirror its argument into a header. */
const HEADER_DECLARATION = 'x-mcp-header';

/** Any object below `node` carrying a header declaration, wherever it sits (the SDK decides whether it counts). */
function declaresHeader(node: unknown): boolean {
  if (node === null || typeof node !== 'object') return false;
  if (!Array.isArray(node) && Object.hasOwn(node, HEADER_DECLARATION)) return true;
  for (const child of Object.values(node)) if (declaresHeader(child)) return true;
  return false;
}

/**
 * True when callTool() would only add its result-schema probe to this listed tool's call. Asked once per
 * listing (the walk of the input schema is bounded by the listing's own bounds).
 */
export function callsDirectly(tool: McpTool): boolean {
  return tool.outputSchema === undefined && !declaresHeader(tool.inputSchema);
}

/** The result keys of other result families: such a body without `content` is not an empty tool result. */
const FOREIGN_RESULT_KEYS = ['task', 'inputRequests', 'requestState'] as const;

const neutral = specTypeSchemas.CallToolResult['~standard'];

/**
 * What the 2025-era wire codec checks beyond the neutral CallToolResult (the SDK's `CallToolResultWireSchema`):
 * a contentless body of another family is refused rather than defaulted to an empty success, and
 * structuredContent is an object. The modern codec validates the raw result against its wire schema before any
 * result schema runs, so the neutral schema alone follows it there.
 */
function legacyIssue(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const body = value as Record<string, unknown>;
  if (body.content === undefined) {
    const foreign = FOREIGN_RESULT_KEYS.find((key) => key in body);
    if (foreign !== undefined) return `content is required when the body carries '${foreign}'`;
  }
  const structured = body.structuredContent;
  if (structured !== undefined && (structured === null || typeof structured !== 'object' || Array.isArray(structured))) return 'structuredContent: expected an object';
  return undefined;
}

type ResultSchema = StandardSchemaV1<unknown, CallToolResult>;

const legacy: ResultSchema = {
  '~standard': {
    version: 1,
    vendor: 'toolgate',
    validate(value) {
      const issue = legacyIssue(value);
      return issue === undefined ? (neutral.validate(value) as StandardSchemaV1.Result<CallToolResult>) : { issues: [{ message: issue }] };
    },
  },
};

const modern: ResultSchema = specTypeSchemas.CallToolResult as ResultSchema;

/** The result schema of a direct tools/call in the connection's era. */
export function callResultSchema(era: UpstreamEra): ResultSchema {
  return era === 'modern' ? modern : legacy;
}
