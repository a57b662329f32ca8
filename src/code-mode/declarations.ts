/**
 * TypeScript declarations of tools, from their JSON Schemas, for `describe_tools`
 * (docs/code-mode.md#describe_tools). Schemas and descriptions come from upstreams, so nothing here
 * trusts them: every name is emitted as a JSON string literal (a quoted property name cannot end the
 * declaration), every description is cut and has its comment terminator broken, and depth, width and
 * output size are bounded; what is cut becomes `unknown`, which is always a valid type.
 */

export interface DeclaredTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: unknown;
  readonly outputSchema: unknown;
}

const MAX_DEPTH = 6;
const MAX_PROPERTIES = 64;
const MAX_UNION = 16;
const MAX_DESCRIPTION_CHARS = 1000;
/** Per tool: a schema larger than this is declared with `unknown` in place of its deepest parts. */
const MAX_TOOL_CHARS = 16_000;
/** All tools of one answer, below the default `maxResultChars` (a cut declaration would not compile). */
const MAX_TOTAL_CHARS = 64_000;

/** What every declaration text starts with: the `tools` object's helpers. */
export const DECLARATIONS_PRELUDE = `/** What a call parked for human approval resolves to instead of the tool's output: the script decides what to do. */
interface PendingApproval { ok: false; status: "pending_approval"; approvalId: string; callId: string; name: string; output: string }
/** A refused or failed call rejects with this error (PERMISSION_DENIED, UNKNOWN_TOOL, RATE_LIMITED, …). */
interface ToolCallError extends Error { errorType: string; tool: string; callId: string }
`;

/** The declarations of `tools` (in order), as one TypeScript text. */
export function declareTools(tools: readonly DeclaredTool[]): string {
  let used = 0;
  const members = tools
    .map((tool) => {
      // Past the total budget a tool is still declared, as `unknown` in and out: the text stays whole and valid.
      const text = used <= MAX_TOTAL_CHARS ? declareTool(tool) : `  ${JSON.stringify(tool.name)}(args: unknown): Promise<unknown>;\n`;
      used += text.length;
      return text;
    })
    .join('');
  return `${DECLARATIONS_PRELUDE}declare const tools: {\n${members}};\n`;
}

function declareTool(tool: DeclaredTool): string {
  for (const depth of [MAX_DEPTH, 3, 1, 0]) {
    const args = typeOf(tool.inputSchema, depth, '  ');
    const output = tool.outputSchema === undefined ? 'unknown' : typeOf(tool.outputSchema, depth, '  ');
    const text = `${docComment(tool.description, '  ')}  ${JSON.stringify(tool.name)}(args: ${args}): Promise<${output} | PendingApproval>;\n`;
    if (text.length <= MAX_TOOL_CHARS || depth === 0) return text;
  }
  return '';
}

/** A `/** … *\/` comment whose text cannot close it early or carry control characters. */
export function docComment(text: string, indent: string): string {
  const cut = text.length > MAX_DESCRIPTION_CHARS ? `${text.slice(0, MAX_DESCRIPTION_CHARS)}…` : text;
  const safe = cut
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f\u2028\u2029]/g, ' ')
    .replace(/\*\//g, '*\u200b/')
    .trim();
  if (safe.length === 0) return '';
  const lines = safe.split(/\r?\n/);
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((line) => `${indent} * ${line}`.trimEnd()).join('\n')}\n${indent} */\n`;
}

type Schema = Record<string, unknown>;
const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

function typeOf(schema: unknown, depth: number, indent: string): string {
  if (!isSchema(schema) || depth <= 0) return 'unknown';
  if (Array.isArray(schema.enum)) return union(schema.enum.slice(0, MAX_UNION).map(literal), schema.enum.length > MAX_UNION);
  if ('const' in schema) return literal(schema.const);
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) return union(options.slice(0, MAX_UNION).map((option) => typeOf(option, depth - 1, indent)), options.length > MAX_UNION);
  }
  const type = schema.type;
  if (Array.isArray(type)) return union(type.slice(0, MAX_UNION).map((one) => typeOf({ ...schema, type: one }, depth, indent)), false);
  switch (type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `Array<${typeOf(schema.items, depth - 1, indent)}>`;
    case 'object':
      return objectType(schema, depth, indent);
    default:
      return isSchema(schema.properties) ? objectType(schema, depth, indent) : 'unknown';
  }
}

function objectType(schema: Schema, depth: number, indent: string): string {
  const properties = isSchema(schema.properties) ? Object.entries(schema.properties) : [];
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((key): key is string => typeof key === 'string') : []);
  const inner = `${indent}  `;
  const kept = properties.slice(0, MAX_PROPERTIES);
  const members = kept.map(([key, value]) => {
    const doc = isSchema(value) && typeof value.description === 'string' ? docComment(value.description, inner) : '';
    return `${doc}${inner}${JSON.stringify(key)}${required.has(key) ? '' : '?'}: ${typeOf(value, depth - 1, inner)};\n`;
  });
  const open = schema.additionalProperties !== false || properties.length > MAX_PROPERTIES;
  if (open) members.push(`${inner}[key: string]: unknown;\n`);
  if (members.length === 0) return '{}';
  return `{\n${members.join('')}${indent}}`;
}

function literal(value: unknown): string {
  if (typeof value === 'string' || typeof value === 'boolean' || value === null) return JSON.stringify(value);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return 'unknown';
}

function union(members: string[], cut: boolean): string {
  const unique = [...new Set(cut ? [...members, 'unknown'] : members)];
  if (unique.includes('unknown')) return 'unknown';
  return unique.length === 0 ? 'never' : unique.length === 1 ? (unique[0] ?? 'unknown') : `(${unique.join(' | ')})`;
}
